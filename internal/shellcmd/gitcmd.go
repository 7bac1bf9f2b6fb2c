package shellcmd

import (
	"maps"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/shell"

	"mvdan.cc/sh/v3/syntax"
)

// gitEnvMatters says why a variable set for git makes the commit hard to
// know ("" when it does not): another repository or index, or
// configuration (core.hooksPath) given through the environment.
func gitEnvMatters(name string) string {
	switch {
	case name == "GIT_DIR", name == "GIT_WORK_TREE", name == "GIT_INDEX_FILE", name == "GIT_COMMON_DIR", name == "GIT_OBJECT_DIRECTORY":
		return name + " points git at another repository or index"
	case strings.HasPrefix(name, "GIT_CONFIG"):
		return name + " gives git configuration azero cannot see (it may turn the commit hooks off)"
	}
	return ""
}

// gitReadOnly are the builtins that never change the index or make a
// commit, so a commit after them takes what it would have taken anyway.
const gitReadOnlyWords = `status diff log show rev-parse ls-files ls-tree cat-file blame grep describe
	shortlog reflog branch tag remote fetch config help version show-ref for-each-ref symbolic-ref rev-list
	name-rev var check-ignore check-attr check-ref-format diff-files diff-index diff-tree whatchanged
	count-objects fsck verify-commit verify-tag archive ls-remote push cherry range-diff merge-base
	show-branch annotate difftool get-tar-commit-id help instaweb`

var gitReadOnly = newWordSet(gitReadOnlyWords)

// gitBuiltins are git's own commands: an alias never shadows them.
var gitBuiltins = newWordSet(gitReadOnlyWords, `add am apply bisect bundle checkout checkout-index cherry-pick citool clean
	clone commit commit-graph commit-tree credential fast-export fast-import format-patch fsmonitor--daemon gc
	gui hash-object hook index-pack init interpret-trailers log maintenance merge merge-file merge-index
	merge-tree mktag mktree multi-pack-index mv notes pack-objects pack-refs prune pull read-tree rebase
	repack replace request-pull rerere reset restore revert rm scalar send-email sparse-checkout stash
	stripspace submodule switch unpack-objects update-index update-ref update-server-info worktree
	write-tree backfill replay refs stage`)

// git interprets git [GLOBAL OPTIONS] SUBCOMMAND [ARGS].
func (w walker) git(args []word, env map[string]string, st *shellState, text string) {
	w.gitDepth(args, env, st, text, map[string]string{}, 0)
}

func (w walker) gitDepth(args []word, env map[string]string, st *shellState, text string, config map[string]string, aliasDepth int) {
	cp := *st
	var why []string
	hooksOff := ""
	for _, name := range slices.Sorted(maps.Keys(env)) {
		switch reason := gitEnvMatters(name); {
		case strings.HasPrefix(name, "GIT_CONFIG"):
			hooksOff = name + " is set for git"
		case reason != "":
			why = append(why, reason)
		}
	}
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			w.s.uncertain(&cp, text, "an argument of git ("+a.raw+") is computed when the command runs")
			return
		}
		v := a.val
		next := func() (word, bool) {
			if i+1 >= len(args) {
				return word{}, false
			}
			i++
			return args[i], true
		}
		switch {
		case v == "-C":
			d, ok := next()
			switch {
			case !ok:
			case !d.known:
				cp.known, cp.dir = false, ""
			default:
				cp.chdir(d.val)
			}
		case v == "-c":
			kv, ok := next()
			if ok {
				if !kv.known {
					hooksOff = "git -c " + kv.raw + " sets configuration computed when the command runs"
					continue
				}
				setConfig(config, kv.val, &hooksOff)
			}
		case strings.HasPrefix(v, "--config-env="):
			k, _, _ := strings.Cut(strings.TrimPrefix(v, "--config-env="), "=")
			if strings.EqualFold(k, "core.hooksPath") {
				hooksOff = v
			}
		case v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			next()
			why = append(why, v+" points git at another repository")
		case strings.HasPrefix(v, "--git-dir=") || strings.HasPrefix(v, "--work-tree="):
			why = append(why, v+" points git at another repository")
		case v == "--super-prefix":
			next()
		case v == "--version", v == "--help", v == "-h", v == "--html-path", v == "--man-path", v == "--info-path",
			v == "--exec-path", strings.HasPrefix(v, "--list-cmds"):
			return
		case strings.HasPrefix(v, "-"):
			// -p, -P, --no-pager, --bare, --literal-pathspecs and the like.
		default:
			break options
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].val, args[i+1:]
	if sub == "commit" {
		c := parseCommitArgs(rest)
		c.Text = text
		c.AfterChanges = cp.staged
		if cp.known {
			c.Dir = cp.dir
		}
		if c.HooksOff == "" {
			c.HooksOff = hooksOff
		}
		if c.Uncertain == "" && len(why) > 0 {
			c.Uncertain = strings.Join(why, "; ")
		}
		if c.Uncertain == "" && cp.opaque != "" {
			c.Uncertain = "the command runs `" + cp.opaque + "` before this commit, and azero cannot foresee what that changes"
		}
		w.s.commits = append(w.s.commits, c)
		st.staged = true // a later commit takes what this one leaves
		return
	}
	if gitBuiltins.has(sub) {
		switch {
		case sub == "add" || sub == "stage":
			// Stages working-tree content, which the gate then reads.
			st.staged = true
		case !gitReadOnly.has(sub):
			st.ran(text)
		}
		return
	}
	w.alias(sub, rest, env, &cp, text, config, aliasDepth)
	st.absorb(cp)
}

// setConfig records one -c key=value.
func setConfig(config map[string]string, kv string, hooksOff *string) {
	k, v, _ := strings.Cut(kv, "=")
	k = strings.ToLower(k)
	config[k] = v
	if k == "core.hookspath" {
		*hooksOff = "git -c " + kv
	}
}

// alias expands a git alias, from -c alias.NAME=... or the repository's
// configuration.
func (w walker) alias(name string, rest []word, env map[string]string, st *shellState, text string, config map[string]string, depth int) {
	if depth >= maxDepth {
		w.s.uncertain(st, text, "git aliases nest too deeply for azero to follow")
		return
	}
	value, ok := config["alias."+strings.ToLower(name)]
	if !ok {
		if w.s.sc.Aliases == nil || !validAliasName(name) {
			return
		}
		if !st.known {
			w.s.uncertain(st, text, "git "+name+" may be an alias of commit, and azero cannot tell which repository's configuration defines it")
			return
		}
		v, found, err := w.s.sc.Aliases(st.dir, name)
		if err != nil {
			w.s.uncertain(st, text, "azero cannot read the git alias "+name+": "+err.Error())
			return
		}
		if !found {
			return
		}
		value = v
	}
	if script, ok := strings.CutPrefix(value, "!"); ok {
		// A shell alias runs SCRIPT "$@" from the top of the work tree.
		for _, r := range rest {
			script += " " + shell.Quote(r.val)
		}
		w.s.script(script, st, w.depth+1)
		return
	}
	words, ok := splitAlias(value)
	if !ok {
		w.s.uncertain(st, text, "azero cannot read the git alias "+name+" ("+value+")")
		return
	}
	w.gitDepth(append(words, rest...), env, st, text, config, depth+1)
}

func validAliasName(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// splitAlias splits an alias value into words the way git does (quotes
// and backslashes), with the shell parser.
func splitAlias(value string) ([]word, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(value), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	w := walker{s: &scan{}, src: value}
	words := w.words(call.Args)
	for _, x := range words {
		if !x.known {
			return nil, false
		}
	}
	return words, true
}
