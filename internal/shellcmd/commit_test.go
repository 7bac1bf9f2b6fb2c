package shellcmd

import (
	"errors"
	"strings"
	"testing"
)

// want is the part of a Commit a case checks.
type want struct {
	dir                                    string
	all, amend, noVerify, paths, afterChgs bool
	hooksOff, uncertain                    bool
}

func (w want) check(t *testing.T, c Commit) {
	t.Helper()
	if c.Dir != w.dir {
		t.Errorf("Dir = %q, want %q", c.Dir, w.dir)
	}
	if c.All != w.all || c.Amend != w.amend || c.NoVerify != w.noVerify || c.Pathspecs != w.paths || c.AfterChanges != w.afterChgs {
		t.Errorf("flags all=%v amend=%v noVerify=%v paths=%v after=%v, want %v %v %v %v %v",
			c.All, c.Amend, c.NoVerify, c.Pathspecs, c.AfterChanges, w.all, w.amend, w.noVerify, w.paths, w.afterChgs)
	}
	if (c.HooksOff != "") != w.hooksOff {
		t.Errorf("HooksOff = %q, want set=%v", c.HooksOff, w.hooksOff)
	}
	if (c.Uncertain != "") != w.uncertain {
		t.Errorf("Uncertain = %q, want set=%v", c.Uncertain, w.uncertain)
	}
}

func TestCommitsRecognition(t *testing.T) {
	t.Parallel()
	aliases := func(dir, name string) (string, bool, error) {
		switch name {
		case "ci":
			return "commit -a", true, nil
		case "cnv":
			return "commit --no-verify", true, nil
		case "shellci":
			return "!git add -A && git commit", true, nil
		case "broken":
			return "", false, errors.New("config unreadable")
		}
		return "", false, nil
	}
	const cwd = "/w/repo"
	cases := []struct {
		name    string
		command string
		want    []want
	}{
		{"plain", `git commit -m "fix"`, []want{{dir: cwd}}},
		{"all short", `git commit -a -m fix`, []want{{dir: cwd, all: true}}},
		{"all clustered with message", `git commit -am "fix it"`, []want{{dir: cwd, all: true}}},
		{"message attached then flags are message", `git commit -m-an`, []want{{dir: cwd}}},
		{"cluster with no-verify", `git commit -anm wip`, []want{{dir: cwd, all: true, noVerify: true}}},
		{"long all", `git commit --all --message=x`, []want{{dir: cwd, all: true}}},
		{"abbreviated all", `git commit --al -m x`, []want{{dir: cwd, all: true}}},
		{"amend", `git commit --amend --no-edit`, []want{{dir: cwd, amend: true}}},
		{"abbreviated amend", `git commit --am`, []want{{dir: cwd, amend: true}}},
		{"no-verify long", `git commit --no-verify -m x`, []want{{dir: cwd, noVerify: true}}},
		{"no-verify short", `git commit -n -m x`, []want{{dir: cwd, noVerify: true}}},
		{"no-verify abbreviated", `git commit --no-veri -m x`, []want{{dir: cwd, noVerify: true}}},
		{"ambiguous no-ver counts as no-verify", `git commit --no-ver -m x`, []want{{dir: cwd, noVerify: true}}},
		{"message containing flags", `git commit -m "--no-verify -a"`, []want{{dir: cwd}}},
		{"file message", `git commit -F - --amend`, []want{{dir: cwd, amend: true}}},
		{"pathspec", `git commit -m x src/a.go`, []want{{dir: cwd, paths: true}}},
		{"pathspec after dashdash", `git commit -m x -- -weird`, []want{{dir: cwd, paths: true}}},
		{"include", `git commit -i a.go -m x`, []want{{dir: cwd, paths: true}}},
		{"only long", `git commit --only -m x a.go`, []want{{dir: cwd, paths: true}}},
		{"pathspec from file", `git commit --pathspec-from-file=list -m x`, []want{{dir: cwd, paths: true}}},
		{"git -C relative", `git -C sub commit -m x`, []want{{dir: cwd + "/sub"}}},
		{"git -C absolute", `git -C /other commit -m x`, []want{{dir: "/other"}}},
		{"git -C twice", `git -C /a -C b commit`, []want{{dir: "/a/b"}}},
		{"git -C empty", `git -C "" commit`, []want{{dir: cwd}}},
		{"hooksPath off", `git -c core.hooksPath=/dev/null commit -m x`, []want{{dir: cwd, hooksOff: true}}},
		{"hooksPath any case", `git -c Core.HooksPath=x commit`, []want{{dir: cwd, hooksOff: true}}},
		{"config-env hooksPath", `git --config-env=core.hooksPath=H commit`, []want{{dir: cwd, hooksOff: true}}},
		{"other -c is fine", `git -c user.name=x commit -m x`, []want{{dir: cwd}}},
		{"git-dir is uncertain", `git --git-dir=/x/.git commit`, []want{{dir: cwd, uncertain: true}}},
		{"GIT_DIR prefix is uncertain", `GIT_DIR=/x/.git git commit -m x`, []want{{dir: cwd, uncertain: true}}},
		{"GIT_CONFIG prefix turns hooks off", `GIT_CONFIG_PARAMETERS="'core.hookspath'='/dev/null'" git commit`, []want{{dir: cwd, hooksOff: true}}},
		{"harmless prefix", `GIT_AUTHOR_NAME=x git commit -m x`, []want{{dir: cwd}}},
		{"and chain", `git add -A && git commit -m x`, []want{{dir: cwd, afterChgs: true}}},
		{"read-only before", `git status && git diff && git commit -m x`, []want{{dir: cwd}}},
		{"cd chain", `cd sub && git commit -m x`, []want{{dir: cwd + "/sub"}}},
		{"cd absolute", `cd /tmp/x; git commit -m x`, []want{{dir: "/tmp/x"}}},
		{"cd home", `cd && git commit`, []want{{dir: "/home/u"}}},
		{"cd tilde", `cd ~/p && git commit`, []want{{dir: "/home/u/p"}}},
		{"cd variable", `cd "$REPO" && git commit -m x`, []want{{uncertain: false}}},
		{"cd dash", `cd - && git commit`, []want{{}}},
		{"subshell cd does not leak", `(cd sub && git status); git commit -m x`, []want{{dir: cwd}}},
		{"subshell commit", `(cd sub && git commit -m x)`, []want{{dir: cwd + "/sub"}}},
		{"cd in if branch is unknown after", `if true; then cd sub; fi; git commit`, []want{{}}},
		{"two commits", `git commit -m a; git commit -am b`, []want{{dir: cwd}, {dir: cwd, all: true, afterChgs: true}}},
		{"or chain after a program", `make test || git commit -m x`, []want{{dir: cwd, uncertain: true}}},
		{"add then commit", `git add a.go b.go && git commit -m x`, []want{{dir: cwd, afterChgs: true}}},
		{"stage alias of add", `git stage -A && git commit -m x`, []want{{dir: cwd, afterChgs: true}}},
		{"git rm before", `git rm big.py && git commit -m x`, []want{{dir: cwd, uncertain: true}}},
		{"redirect before", `echo x > notes.txt && git commit -am x`, []want{{dir: cwd, all: true, uncertain: true}}},
		{"redirect to dev null is fine", `git status > /dev/null 2>&1 && git commit -m x`, []want{{dir: cwd}}},
		{"the commit's own redirect is fine", `git commit -m x > log.txt`, []want{{dir: cwd}}},
		{"sed in place before", `sed -i s/a/b/ f.go && git commit -am x`, []want{{dir: cwd, all: true, uncertain: true}}},
		{"sed reading before", `sed -n 1p f.go | head -1 && git commit -m x`, []want{{dir: cwd}}},
		{"find delete before", `find . -name '*.orig' -delete; git commit -m x`, []want{{dir: cwd, uncertain: true}}},
		{"formatter in substitution before", `git commit -m "$(gofmt -w . && echo msg)"`, []want{{dir: cwd, uncertain: true}}},
		{"nested shells", `sh -c "bash -c 'git commit -n -m x'"`, []want{{dir: cwd, noVerify: true}}},
		{"pipe", `git commit -m x | tee log`, []want{{dir: cwd}}},
		{"command substitution", `echo "$(git commit -m x)"`, []want{{dir: cwd}}},
		{"backquotes", "echo `git commit -am x`", []want{{dir: cwd, all: true}}},
		{"claude heredoc message", "git commit -m \"$(cat <<'EOF'\nFix the parser (it's broken)\n\n)\" EOF-like text\nEOF\n)\"", []want{{dir: cwd}}},
		{"heredoc body is not a command", "cat <<'EOF' > notes.txt\ngit commit -am wip\nEOF", nil},
		{"sh -c", `sh -c 'git commit -am x'`, []want{{dir: cwd, all: true}}},
		{"bash -lc", `bash -lc "cd sub && git commit -m x"`, []want{{dir: cwd + "/sub"}}},
		{"eval", `eval git commit --no-verify -m x`, []want{{dir: cwd, noVerify: true}}},
		{"env wrapper", `env GIT_AUTHOR_NAME=x git commit -m x`, []want{{dir: cwd}}},
		{"env chdir", `env -C sub git commit -m x`, []want{{dir: cwd + "/sub"}}},
		{"env split string", `env -S "git commit -n -m x"`, []want{{dir: cwd, noVerify: true}}},
		{"sudo", `sudo -u bob git commit -m x`, []want{{dir: cwd}}},
		{"nohup time nice", `nohup nice -n 5 git commit -m x`, []want{{dir: cwd}}},
		{"timeout", `timeout -s KILL 30 git commit -m x`, []want{{dir: cwd}}},
		{"command builtin", `command git commit -m x`, []want{{dir: cwd}}},
		{"full path git", `/usr/bin/git commit -m x`, []want{{dir: cwd}}},
		{"quoted subcommand", `git "commit" -m x`, []want{{dir: cwd}}},
		{"escaped subcommand", `git c\ommit -m x`, []want{{dir: cwd}}},
		{"xargs", `echo a.go | xargs git commit -m x`, []want{{dir: cwd, paths: true, uncertain: true}}},
		{"find exec", `find . -name x -exec git commit -m x {} \;`, []want{{dir: cwd, paths: true}}},
		{"computed command name", `$GIT commit -m x`, []want{{dir: cwd, uncertain: true}}},
		{"computed argument", `git commit $FLAGS -m x`, []want{{dir: cwd, paths: true, uncertain: true}}},
		{"computed message is fine", `git commit -m "$MSG"`, []want{{dir: cwd}}},
		{"alias from config", `git ci -m x`, []want{{dir: cwd, all: true}}},
		{"alias no-verify", `git cnv -m x`, []want{{dir: cwd, noVerify: true}}},
		{"shell alias", `git shellci -m x`, []want{{dir: cwd, afterChgs: true}}},
		{"alias given with -c", `git -c alias.save='commit -a' save -m x`, []want{{dir: cwd, all: true}}},
		{"alias unreadable", `git broken`, []want{{dir: cwd, uncertain: true}}},
		{"unknown alias is nothing", `git lg`, nil},
		{"function body", `f() { git commit -m x; }; f`, []want{{dir: cwd}}},
		{"unparseable mentioning commit", `git commit -m "unterminated`, []want{{dir: cwd, uncertain: true}}},
		{"unparseable without commit", `echo "unterminated`, nil},
		{"not a commit", `git commit-tree HEAD^{tree}`, nil},
		{"log grep commit", `git log --grep commit`, nil},
		{"echo mentions", `echo git commit`, nil},
		{"version", `git --version commit`, nil},
		{"comment", `ls # git commit -am x`, nil},
		{"export GIT_DIR", `export GIT_DIR=/x; git commit -m x`, []want{{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CommitScanner{Cwd: cwd, Home: "/home/u", Aliases: aliases}.Commits(tc.command)
			if len(got) != len(tc.want) {
				t.Fatalf("Commits(%q) = %d commits %+v, want %d", tc.command, len(got), got, len(tc.want))
			}
			for i := range got {
				tc.want[i].check(t, got[i])
				if got[i].Text == "" {
					t.Errorf("commit %d has no Text", i)
				}
			}
		})
	}
}

func TestCommitTextIsShortened(t *testing.T) {
	t.Parallel()
	long := "git commit -m " + strings.Repeat("é", 400)
	got := CommitScanner{Cwd: "/r"}.Commits(long)
	if len(got) != 1 {
		t.Fatalf("got %d commits", len(got))
	}
	if len(got[0].Text) > maxText+len("…") || !strings.HasSuffix(got[0].Text, "…") {
		t.Errorf("Text not shortened: %d bytes", len(got[0].Text))
	}
	if !strings.HasPrefix(got[0].Text, "git commit -m é") {
		t.Errorf("Text = %q", got[0].Text[:30])
	}
}

func TestCommitsNestTooDeep(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("eval ", maxDepth+2) + "git commit -m x"
	got := CommitScanner{Cwd: "/r"}.Commits(cmd)
	if len(got) != 1 || got[0].Uncertain == "" {
		t.Fatalf("deeply nested commit = %+v, want one uncertain commit", got)
	}
}
