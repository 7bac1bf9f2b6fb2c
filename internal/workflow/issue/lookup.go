package issue

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// FiledTrail finds the audit trail of issue number n as an issue run left
// it once filed: the directory auditDir/done/<n>-<slug> of the repository
// at root whose filing record (NNN-filed.json) names that number on the
// tracker called trackerName (Filed.Tracker: "github OWNER/NAME", "local
// DIR") and, when runID is not "", that run (the issue's marker names
// it). It returns the record with Dir set, and false when no trail
// matches (an issue filed by hand, or its trail moved).
func FiledTrail(root, auditDir string, n int, trackerName, runID string) (Filed, bool, error) {
	done := path.Join(auditDir, "done")
	des, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(done)))
	if errors.Is(err, fs.ErrNotExist) {
		return Filed{}, false, nil
	}
	if err != nil {
		return Filed{}, false, fmt.Errorf("look for the audit trail of issue #%d: %w", n, err)
	}
	prefix := fmt.Sprintf("%d-", n)
	var names []string
	for _, de := range des {
		if de.IsDir() && strings.HasPrefix(de.Name(), prefix) {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t := Trail{Root: root, Dir: path.Join(done, name)}
		entries, err := t.Entries()
		if err != nil {
			return Filed{}, false, err
		}
		for _, e := range entries {
			if e.Kind != KindFiled {
				continue
			}
			b, err := t.Read(e)
			if err != nil {
				return Filed{}, false, err
			}
			var rec Filed
			if json.Unmarshal(b, &rec) != nil || rec.Number != n || rec.Tracker != trackerName || (runID != "" && rec.RunID != runID) {
				continue
			}
			rec.Dir = t.Dir
			return rec, true, nil
		}
	}
	return Filed{}, false, nil
}
