package shellcmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/shell"
)

func FuzzCommits(f *testing.F) {
	for _, s := range []string{
		`git commit -am x`, `cd sub && git -C .. commit --amend`, `echo "$(git commit -n)"`,
		"git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", `sh -c 'git ci'`, `eval "git commit"`,
		`(cd a; git commit) | tee x`, `git -c alias.x=commit x --no-verify`, `xargs git commit`,
		`if true; then cd x; fi; git commit`, `f() { git commit; }`, `env -S "git commit -a"`,
		`git commit -m "unterminated`, `$(printf git) commit`, `git add . && git commit`,
	} {
		f.Add(s)
	}
	aliases := func(dir, name string) (string, bool, error) {
		if name == "ci" {
			return "commit -a", true, nil
		}
		if name == "loop" {
			return "loop", true, nil
		}
		return "", false, nil
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		commits := CommitScanner{Cwd: "/work/repo", Home: "/home/u", Aliases: aliases}.Commits(cmd)
		for _, c := range commits {
			if c.Dir != "" && (!filepath.IsAbs(c.Dir) || filepath.Clean(c.Dir) != c.Dir) {
				t.Fatalf("Dir %q is not a clean absolute path", c.Dir)
			}
			if c.Text == "" && strings.TrimSpace(cmd) != "" {
				t.Fatalf("a commit without Text in %q", cmd)
			}
			if len(c.Text) > maxText+len("…") {
				t.Fatalf("Text of %d bytes", len(c.Text))
			}
		}
	})
}

// FuzzCommitArgs checks the option reading against a property git
// guarantees: an option written first, before any argument, is always read
// as that option, whatever follows.
func FuzzCommitArgs(f *testing.F) {
	for _, s := range []string{"-m\x00x", "-am\x00msg", "--\x00-a", "-F\x00-", "--message=--no-verify", "path\x00-n", "-C", "--fixup"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		if strings.ContainsRune(joined, 0xfffd) {
			return
		}
		var quoted []string
		for _, a := range strings.Split(joined, "\x00") {
			quoted = append(quoted, shell.Quote(a))
		}
		rest := strings.Join(quoted, " ")
		for _, tc := range []struct {
			first string
			check func(Commit) bool
		}{
			{"--no-verify", func(c Commit) bool { return c.NoVerify }},
			{"-n", func(c Commit) bool { return c.NoVerify }},
			{"-a", func(c Commit) bool { return c.All }},
			{"--amend", func(c Commit) bool { return c.Amend }},
		} {
			cmd := "git commit " + tc.first + " " + rest
			commits := CommitScanner{Cwd: "/r"}.Commits(cmd)
			if len(commits) != 1 {
				t.Fatalf("%q: %d commits, want 1", cmd, len(commits))
			}
			if !tc.check(commits[0]) {
				t.Fatalf("%q: %s not read: %+v", cmd, tc.first, commits[0])
			}
		}
	})
}
