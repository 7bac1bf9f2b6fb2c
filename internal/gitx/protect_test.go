package gitx_test

// Programs a repository's configuration names (planted by code a test
// run executed, say) must not run inside azero's own git calls. Each case
// plants a program that would leave a marker file, proves with a plain
// git that the plant works, then makes the calls azero makes through
// gitx and finds no marker.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

// marker returns a program that creates a file when run, and the file.
func marker(t *testing.T, name string) (script, mark string) {
	t.Helper()
	dir := t.TempDir()
	mark = filepath.Join(dir, name+".ran")
	script = filepath.Join(dir, name+".sh")
	body := "#!/bin/sh\n: > '" + mark + "'\ncat >/dev/null 2>&1 </dev/null\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, mark
}

func ran(mark string) bool {
	_, err := os.Stat(mark)
	return err == nil
}

// plainGit runs git as a user would, without gitx's protection.
func plainGit(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = testenv.GitEnv(os.Environ())
	_ = cmd.Run()
}

// plantedRepo is a repository with a committed file, a linked work tree
// on a branch of azero's (as a run has), and an uncommitted change in it.
func plantedRepo(t *testing.T) (repo, wt string) {
	t.Helper()
	repo = testenv.NewRepo(t, map[string]string{"a.txt": "one\n", "b.go": "package b\n"})
	wt = filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, repo, "worktree", "add", "-q", "-b", "azero/1-x", wt)
	write(t, wt, "a.txt", "two\n")
	write(t, wt, "new.txt", "new\n")
	return repo, wt
}

// azeroCalls makes the git calls azero's workflows make in a run's work
// tree and the user's checkout.
func azeroCalls(t *testing.T, repo, wt string) {
	t.Helper()
	ctx := t.Context()
	w, r := gitx.Repo{Dir: wt}, gitx.Repo{Dir: repo}
	wt2 := filepath.Join(t.TempDir(), "wt2")
	calls := []func(context.Context) error{
		func(ctx context.Context) error { _, err := w.DirtyPaths(ctx); return err },
		func(ctx context.Context) error { _, err := w.ListUntrackedAndUnmerged(ctx); return err },
		func(ctx context.Context) error { _, err := w.Run(ctx, "status", "--porcelain"); return err },
		func(ctx context.Context) error {
			_, err := w.Run(ctx, append([]string{"diff", "-M", "HEAD", "--"}, gitx.PatchArgs...)...)
			return err
		},
		func(ctx context.Context) error { _, err := w.Run(ctx, "diff", "HEAD"); return err },
		func(ctx context.Context) error { _, err := w.Run(ctx, "log", "-p", "-1"); return err },
		func(ctx context.Context) error { _, err := w.Run(ctx, "show", "HEAD"); return err },
		func(ctx context.Context) error { _, err := w.Run(ctx, "add", "-A"); return err },
		func(ctx context.Context) error { _, err := w.Run(ctx, "diff", "--cached", "HEAD"); return err },
		// Without --no-verify: the protection alone keeps hooks out.
		func(ctx context.Context) error { _, err := w.Run(ctx, "commit", "--quiet", "-m", "change"); return err },
		func(ctx context.Context) error {
			_, err := r.Run(ctx, "merge", "--no-edit", "--quiet", "azero/1-x")
			return err
		},
		func(ctx context.Context) error { return r.AddWorktree(ctx, wt2, "azero/2-y", "HEAD") },
		func(ctx context.Context) error { return r.RemoveWorktree(ctx, wt2) },
		func(ctx context.Context) error { return r.DeleteBranch(ctx, "azero/2-y", true) },
		func(ctx context.Context) error { _, err := r.ChangedPaths(ctx, "HEAD~1", "HEAD"); return err },
	}
	for i, call := range calls {
		if err := call(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

func TestPlantedProgramsDoNotRunInsideGitx(t *testing.T) {
	t.Parallel()
	hookNames := []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "post-merge",
		"reference-transaction", "post-index-change", "pre-merge-commit", "post-rewrite"}
	tests := []struct {
		name string
		// plant makes repo run programs; it returns their markers and a
		// plain git command (in wt) that proves the plant works.
		plant func(t *testing.T, repo, wt string) (marks []string, proof []string)
	}{
		{"fsmonitor", func(t *testing.T, repo, wt string) ([]string, []string) {
			script, mark := marker(t, "fsmonitor")
			testenv.Git(t, repo, "config", "core.fsmonitor", script)
			return []string{mark}, []string{"status"}
		}},
		{"hooks in .git/hooks", func(t *testing.T, repo, wt string) ([]string, []string) {
			var marks []string
			for _, h := range hookNames {
				script, mark := marker(t, h)
				body, _ := os.ReadFile(script)
				write(t, repo, ".git/hooks/"+h, string(body))
				os.Chmod(filepath.Join(repo, ".git", "hooks", h), 0o755)
				marks = append(marks, mark)
			}
			return marks, []string{"commit", "--allow-empty", "-qm", "proof"}
		}},
		{"a planted core.hooksPath", func(t *testing.T, repo, wt string) ([]string, []string) {
			dir := t.TempDir()
			var marks []string
			for _, h := range hookNames {
				script, mark := marker(t, h)
				body, _ := os.ReadFile(script)
				write(t, dir, h, string(body))
				os.Chmod(filepath.Join(dir, h), 0o755)
				marks = append(marks, mark)
			}
			testenv.Git(t, repo, "config", "core.hooksPath", dir)
			return marks, []string{"commit", "--allow-empty", "-qm", "proof"}
		}},
		{"textconv and external diff", func(t *testing.T, repo, wt string) ([]string, []string) {
			textconv, m1 := marker(t, "textconv")
			command, m2 := marker(t, "diffcommand")
			external, m3 := marker(t, "external")
			write(t, repo, ".git/info/attributes", "* diff=evil\n")
			testenv.Git(t, repo, "config", "diff.evil.textconv", textconv)
			testenv.Git(t, repo, "config", "diff.evil.command", command)
			testenv.Git(t, repo, "config", "diff.external", external)
			return []string{m1, m2, m3}, []string{"diff", "HEAD"}
		}},
		{"aliases of the commands azero runs", func(t *testing.T, repo, wt string) ([]string, []string) {
			script, mark := marker(t, "alias")
			for _, c := range []string{"status", "diff", "add", "commit", "merge", "worktree", "branch", "ls-files", "cat-file", "rev-parse", "log", "show", "update-ref", "hello"} {
				testenv.Git(t, repo, "config", "alias."+c, "!"+script)
			}
			return []string{mark}, []string{"hello"}
		}},
		{"a signing program", func(t *testing.T, repo, wt string) ([]string, []string) {
			script, mark := marker(t, "gpg")
			testenv.Git(t, repo, "config", "commit.gpgSign", "true")
			testenv.Git(t, repo, "config", "gpg.program", script)
			return []string{mark}, []string{"commit", "--allow-empty", "-qm", "proof"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, wt := plantedRepo(t)
			marks, proof := tt.plant(t, repo, wt)

			// The plant works: a plain git in a copy of the repository runs it.
			proofRepo, proofWt := plantedRepo(t)
			copyConfig(t, repo, proofRepo)
			plainGit(proofWt, proof...)
			if !slices.ContainsFunc(marks, ran) {
				t.Fatalf("the planted program does not run even in a plain git %v: the test proves nothing", proof)
			}
			for _, m := range marks {
				os.Remove(m)
			}

			azeroCalls(t, repo, wt)
			for _, m := range marks {
				if ran(m) {
					t.Errorf("%s ran inside gitx's git calls", filepath.Base(m))
				}
			}
		})
	}
}

// copyConfig gives proof the planted configuration, attributes and hooks
// of repo.
func copyConfig(t *testing.T, repo, proof string) {
	t.Helper()
	for _, p := range []string{"config", "info/attributes"} {
		if b, err := os.ReadFile(filepath.Join(repo, ".git", p)); err == nil {
			write(t, proof, ".git/"+p, string(b))
		}
	}
	hooks, _ := os.ReadDir(filepath.Join(repo, ".git", "hooks"))
	for _, h := range hooks {
		if b, err := os.ReadFile(filepath.Join(repo, ".git", "hooks", h.Name())); err == nil && !strings.HasSuffix(h.Name(), ".sample") {
			p := filepath.Join(proof, ".git", "hooks", h.Name())
			if err := os.WriteFile(p, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestProtectionKeepsTheCallersConfiguration: configuration passed to
// azero in the environment (a git hook that started it runs with some)
// still applies, under the protection.
func TestProtectionKeepsTheCallersConfiguration(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := gitx.Repo{Dir: repo, Env: []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=azero.test", "GIT_CONFIG_VALUE_0=kept",
		"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=" + t.TempDir()}}
	for key, want := range map[string]string{"azero.test": "kept", "core.hooksPath": gitx.NoHooks, "core.fsmonitor": "false"} {
		out, err := r.Run(t.Context(), "config", "--get", key)
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
}

// TestHooksDir finds the directory the user's own commits run hooks
// from, which the protection hides from every other call.
func TestHooksDir(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.txt": "a\n"})
	r := gitx.Repo{Dir: repo}
	got, err := r.HooksDir(t.Context())
	if want := filepath.Join(repo, ".git", "hooks"); err != nil || got != want {
		t.Errorf("HooksDir = %q, %v; want %q", got, err, want)
	}
	custom := t.TempDir()
	testenv.Git(t, repo, "config", "core.hooksPath", custom)
	if got, err := r.HooksDir(t.Context()); err != nil || got != custom {
		t.Errorf("HooksDir with core.hooksPath = %q, %v; want %q", got, err, custom)
	}
}
