package governance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/azero-dev/azero/internal/lazyre"
	"github.com/azero-dev/azero/internal/safewrite"
)

// Kinds of audit trail files. The loop's kinds are every workflow's; the
// input and the final record are each workflow's own.
const (
	KindBrief         = "brief"          // the human's brief, copied first
	KindIssue         = "issue"          // design: the issue the design is for, as read from the tracker
	KindDraft         = "draft"          // a drafter reply, as the model wrote it
	KindCheck         = "check"          // design: the mechanical check's findings on a draft, sent back to the drafter
	KindDraftEdited   = "draft-edited"   // the draft after the human edited it
	KindFeedback      = "feedback"       // the human's feedback asking for a revision
	KindVerdict       = "verdict"        // a reviewer reply, as the model wrote it
	KindVerdictEdited = "verdict-edited" // the verdict after the human sanitised it
	KindFiled         = "filed"          // issue: the filing record (number, URL, title, labels, time)
	KindDesigned      = "designed"       // design: the record of the document committed (path, issue, verdict, time)
)

// extensions gives each kind its file extension.
var extensions = map[string]string{
	KindBrief: "md", KindIssue: "md", KindDraft: "md", KindCheck: "txt", KindDraftEdited: "md", KindFeedback: "txt",
	KindVerdict: "md", KindVerdictEdited: "md", KindFiled: "json", KindDesigned: "json",
}

// Entry is one file of an audit trail.
type Entry struct {
	N    int    `json:"n"`    // sequence number, from 1
	Kind string `json:"kind"` // one of the Kind constants
	Name string `json:"name"` // file name, "002-draft.md"
}

var entryName = lazyre.New(`^([0-9]{3,9})-([a-z]+(?:-[a-z]+)*)\.(md|txt|json)$`)

// ParseEntry recognises a trail file name: at least three digits, a
// hyphen, a known kind and that kind's extension. Anything else (a
// README, an editor's backup file) is not part of the trail.
func ParseEntry(name string) (Entry, bool) {
	m := entryName().FindStringSubmatch(name)
	if m == nil {
		return Entry{}, false
	}
	ext, known := extensions[m[2]]
	if !known || ext != m[3] {
		return Entry{}, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return Entry{}, false
	}
	return Entry{N: n, Kind: m[2], Name: name}, true
}

// EntryName returns the file name of entry n of kind.
func EntryName(n int, kind string) string {
	return fmt.Sprintf("%03d-%s.%s", n, kind, extensions[kind])
}

// Trail is a run's audit directory inside the repository.
type Trail struct {
	Root   string // repository root
	Dir    string // slash-separated, relative to Root: docs/audit/active/<slug>
	Writer *safewrite.Writer
	RunID  string
	Actor  string // who writes, in safewrite's records ("azero issue"); "" is "azero"
}

func (t Trail) actor() string {
	if t.Actor == "" {
		return "azero"
	}
	return t.Actor
}

func (t Trail) abs() string { return filepath.Join(t.Root, filepath.FromSlash(t.Dir)) }

// Exists reports whether the directory exists.
func (t Trail) Exists() bool {
	info, err := os.Stat(t.abs())
	return err == nil && info.IsDir()
}

// Entries returns the trail's files in order. A missing directory is an
// empty trail. Two files with one number are an error: the order of events
// would be ambiguous.
func (t Trail) Entries() ([]Entry, error) {
	des, err := os.ReadDir(t.abs())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the audit trail %s: %w", t.Dir, err)
	}
	var out []Entry
	for _, de := range des {
		if e, ok := ParseEntry(de.Name()); ok && de.Type().IsRegular() {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	for i := 1; i < len(out); i++ {
		if out[i].N == out[i-1].N {
			return nil, fmt.Errorf("audit trail %s: %s and %s share number %d; rename one so the order of events is clear",
				t.Dir, out[i-1].Name, out[i].Name, out[i].N)
		}
	}
	return out, nil
}

// Read returns an entry's content.
func (t Trail) Read(e Entry) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(t.abs(), e.Name))
	if err != nil {
		return nil, fmt.Errorf("read the audit trail: %w", err)
	}
	return b, nil
}

// Last returns the trail's last entry, and false when it is empty.
func Last(entries []Entry) (Entry, bool) {
	if len(entries) == 0 {
		return Entry{}, false
	}
	return entries[len(entries)-1], true
}

// Count returns how many entries are of kind.
func Count(entries []Entry, kind string) int {
	n := 0
	for _, e := range entries {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// Normalise gives text files one final newline, so what the editor saves
// and what was written compare equal. JSON records are kept as they are.
func Normalise(kind string, content []byte) []byte {
	if extensions[kind] == "json" {
		return content
	}
	c := bytes.TrimRight(content, "\n")
	return append(c[:len(c):len(c)], '\n')
}

// Record adds content as the next entry of kind. When the last entry is
// already of this kind with this content (a repeated node wrote it before
// the run was checkpointed), it is returned and nothing is written. The
// number is one more than the highest present; the file must not exist.
func (t Trail) Record(ctx context.Context, kind string, content []byte) (Entry, error) {
	if _, ok := extensions[kind]; !ok {
		return Entry{}, fmt.Errorf("audit trail: unknown kind %q", kind)
	}
	content = Normalise(kind, content)
	entries, err := t.Entries()
	if err != nil {
		return Entry{}, err
	}
	next := 1
	if last, ok := Last(entries); ok {
		if last.Kind == kind {
			if old, err := t.Read(last); err == nil && bytes.Equal(Normalise(kind, old), content) {
				return last, nil
			}
		}
		next = last.N + 1
	}
	e := Entry{N: next, Kind: kind, Name: EntryName(next, kind)}
	_, err = t.Writer.Write(ctx, safewrite.Request{
		Root: t.Root, Path: path.Join(t.Dir, e.Name), Content: content,
		Base: &safewrite.Snapshot{Exists: false}, Actor: t.actor(), RunID: t.RunID,
	})
	if err != nil {
		return Entry{}, fmt.Errorf("record %s in the audit trail: %w", e.Name, err)
	}
	return e, nil
}
