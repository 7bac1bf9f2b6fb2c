package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// Every command that drives or lists runs takes --engine and --temporal,
// and refuses an engine that cannot be used as a usage error (exit 2)
// before any work: the demo writes no project.
func TestEveryRunCommandTakesTheEngineFlags(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	repo := testenv.NewRepo(t, map[string]string{"README.md": "x\n"})
	demoDir := t.TempDir()
	commands := map[string][]string{
		"implement": {"implement", "--lld", "design.md"},
		"issue":     {"issue", "--brief", "notes.md"},
		"demo":      {"demo", "--dir", demoDir},
		"runs":      {"runs"},
		"runs show": {"runs", "show", "261124-x"},
		"resume":    {"resume", "261124-x"},
		"serve":     {"serve"},
	}
	for name, args := range commands {
		for _, c := range []struct {
			flags []string
			want  string
		}{
			{[]string{"--engine", "kubernetes"}, `--engine "kubernetes": use local or temporal`},
			{[]string{"--engine", "temporal"}, "needs the cluster's address"},
			{[]string{"--engine", "local", "--temporal", "localhost:7233"}, "needs --engine temporal"},
		} {
			t.Run(name+" "+strings.Join(c.flags, " "), func(t *testing.T) {
				t.Parallel()
				code, out, errOut := runInProcess(t, repo, append(slices.Clone(args), c.flags...)...)
				if code != ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, c.want)
				}
			})
		}
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(demoDir, "textkit")); !os.IsNotExist(err) {
			t.Errorf("a demo refused for its engine should write nothing: %v", err)
		}
	})
}
