package flow_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/azero-dev/azero"

// goList runs the go command's list in this module.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// TestCapabilitiesImportNeitherFlowNorStore: the capabilities, the tracker
// and the terminal's prompts are libraries usable without a workflow, so
// none of them may depend on the engine or the store (and so on SQLite);
// the human contract and the events are leaves that depend on nothing of
// azero. (.ci/run checks the same with go list -deps.)
func TestCapabilitiesImportNeitherFlowNorStore(t *testing.T) {
	t.Parallel()
	libraries := []string{"edit", "safewrite", "review", "testrun", "contextload", "lld", "tracker", "prompt", "repomap"}
	leaves := []string{"human", "event"}
	var pkgs []string
	for _, p := range append(slices.Clone(libraries), leaves...) {
		pkgs = append(pkgs, module+"/internal/"+p)
	}
	out := goList(t, append([]string{"-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pkgs...)...)
	seen := 0
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, deps := strings.TrimPrefix(fields[0], module+"/internal/"), fields[1:]
		seen++
		for _, d := range deps {
			switch {
			case slices.Contains(leaves, pkg) && strings.HasPrefix(d, module+"/"):
				t.Errorf("internal/%s is a leaf but imports %s", pkg, d)
			case d == module+"/internal/flow" || d == module+"/internal/store":
				t.Errorf("internal/%s imports %s", pkg, d)
			}
		}
	}
	if seen != len(pkgs) {
		t.Fatalf("go list described %d packages, want %d:\n%s", seen, len(pkgs), out)
	}
}
