package cli

// The diff gate under the git hook frameworks people use, set up exactly
// as the README documents them: Debian's pre-commit, and lefthook and
// husky from npm. Each pipes the hook's streams its own way; a human at
// the terminal `git commit` runs on must still be asked, and nobody can
// be asked without one.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// hookFramework is one framework: its command, the configuration file the
// README gives for it, how its git hook is installed, and what it prints
// when the gate exits 3.
type hookFramework struct {
	tool    string
	file    string
	install []string
	exit3   string // "" when the framework does not print the hook's status
	// viaTTY: the framework leaves stdin or stderr without a terminal, so
	// azero opens /dev/tty (pre-commit pipes both, husky inherits git's
	// stdin from /dev/null); lefthook's interactive mode passes the
	// terminal itself.
	viaTTY bool
}

var hookFrameworks = []hookFramework{
	{tool: "pre-commit", file: ".pre-commit-config.yaml", install: []string{"pre-commit", "install"}, exit3: "- exit code: 3", viaTTY: true},
	{tool: "lefthook", file: "lefthook.yml", install: []string{"lefthook", "install"}},
	{tool: "husky", file: ".husky/pre-commit", install: []string{"husky"}, exit3: "husky - pre-commit script failed (code 3)", viaTTY: true},
}

// readmeHookSetups returns the README's configuration files for the hook
// frameworks, keyed by the file name each block's first line names.
func readmeHookSetups(t *testing.T) map[string]string {
	t.Helper()
	_, bodies := fencedBlocks(readmeSection(t, "### The diff gate under pre-commit, lefthook and husky"))
	files := map[string]string{}
	for _, b := range bodies {
		first, _, _ := strings.Cut(b, "\n")
		if name, ok := strings.CutPrefix(first, "# "); ok {
			files[name] = b
		}
	}
	return files
}

// frameworkRepo is a repository with big.py (200 lines) and the
// framework's configuration from the README committed, its hook installed,
// and big.py's deletion staged: a flagged commit. env runs azero as
// `azero` on the PATH.
func frameworkRepo(t *testing.T, fw hookFramework, config, state string) (repo string, env []string) {
	t.Helper()
	bin := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "azero")); err != nil {
		t.Fatal(err)
	}
	env = azeroEnv(state, "NO_COLOR=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PRE_COMMIT_HOME="+t.TempDir(), "HOME="+t.TempDir())
	repo = testenv.NewRepo(t, map[string]string{"big.py": numberedLines("line", 200), fw.file: config})
	install := withoutTerminal(commandIn(repo, env, fw.install...))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(fw.install, " "), err, out)
	}
	testenv.Git(t, repo, "rm", "-q", "big.py")
	return repo, env
}

func commitCount(t *testing.T, repo string) int {
	t.Helper()
	return strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n")
}

func TestGateUnderHookFrameworks(t *testing.T) {
	t.Parallel()
	setups := readmeHookSetups(t)
	for _, fw := range hookFrameworks {
		t.Run(fw.tool, func(t *testing.T) {
			t.Parallel()
			testenv.RequireTool(t, fw.tool)
			config, ok := setups[fw.file]
			if !ok {
				t.Fatalf("the README has no block for %s (its first line '# %s')", fw.file, fw.file)
			}
			if !strings.Contains(config, "azero gate --staged") {
				t.Fatalf("the README's %s does not run azero gate --staged:\n%s", fw.file, config)
			}

			t.Run("approved at the terminal", func(t *testing.T) {
				t.Parallel()
				state := t.TempDir()
				repo, env := frameworkRepo(t, fw, config, state)
				s := startOnTerminal(t, repo, env, "git", "commit", "-m", "drop big.py")
				s.WaitFor(t, "Type 'approve' to proceed", 1)
				if w, q := strings.Index(s.Text(), "WARNING: DELETED: big.py"), strings.Index(s.Text(), "Type 'approve'"); w < 0 || w > q {
					t.Errorf("the report is not on the terminal before the question:\n%s", s.Text())
				}
				s.Type(t, "approve")
				if code := s.exit(t); code != 0 {
					t.Fatalf("git commit: exit %d\n%s", code, s.Text())
				}
				if n := commitCount(t, repo); n != 2 {
					t.Errorf("%d commits after approve, want 2\n%s", n, s.Text())
				}
				if fw.viaTTY && !strings.Contains(s.Text(), "Diff review: APPROVED by the human at the terminal (asked through /dev/tty).") {
					t.Errorf("the hook's output lacks the outcome:\n%s", s.Text())
				}
				if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "APPROVED" || recs[0]["staged"] != true {
					t.Errorf("audit = %v", recs)
				}
			})

			t.Run("refused without a terminal", func(t *testing.T) {
				t.Parallel()
				state := t.TempDir()
				repo, env := frameworkRepo(t, fw, config, state)
				out, err := withoutTerminal(commandIn(repo, env, "git", "commit", "-m", "drop big.py")).CombinedOutput()
				if err == nil {
					t.Fatalf("the flagged commit went through without a terminal:\n%s", out)
				}
				if n := commitCount(t, repo); n != 1 {
					t.Errorf("%d commits, want the commit refused", n)
				}
				for _, want := range []string{"WARNING: DELETED: big.py", "nobody can be asked", "no controlling terminal", fw.exit3} {
					if !strings.Contains(string(out), want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
				if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "ABORTED_NON_INTERACTIVE" {
					t.Errorf("audit = %v", recs)
				}
			})
		})
	}
}

// commandIn is the command args in dir with env.
func commandIn(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}
