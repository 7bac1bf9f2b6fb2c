package gitx

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// NoHooks is the hooks directory every git azero starts is given: a path
// under a character device, which no one can create, so git finds no hook
// there whatever a repository's .git/hooks or core.hooksPath holds.
const NoHooks = "/dev/null"

// protection is the configuration every git process of this package gets
// on its command line, passed through the environment (GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n, git 2.31 or later): command-line
// configuration wins over every configuration file, so a repository
// whose .git/config (or an included file) a test run rewrote cannot make
// azero's own git calls run its programs, and nothing shows on argv.
//
// What a planted configuration could run inside the commands azero uses,
// and what stops it:
//
//   - core.fsmonitor (status, diff, add, ls-files): off below;
//   - hooks, from .git/hooks or a planted core.hooksPath (commit, merge,
//     worktree add's post-checkout, every ref update's
//     reference-transaction, post-index-change): core.hooksPath is NoHooks;
//   - external diff and textconv drivers (diff.external, diff.NAME.command,
//     diff.NAME.textconv): every diff, log and show gets --no-ext-diff and
//     --no-textconv (see noExternalDiff), as a driver's name is the
//     repository's to choose;
//   - the editor and the pager: core.editor and core.pager below (git
//     never pages into a pipe anyway);
//   - signing programs (gpg.program and its ssh and x509 kinds, a planted
//     commit.gpgSign): azero's commits are not signed; the human's approval
//     is in the audit log;
//   - automatic gc and maintenance after a commit, which run no hook here
//     but could take long: off;
//   - core.sshCommand, credential helpers: azero never fetches or pushes;
//     set anyway, so a future command cannot inherit a planted one;
//   - the untracked cache, which a crafted index extension could use to
//     hide an untracked file from the diff review: off;
//   - submodule recursion (a checkout or a merge running in a planted
//     submodule's repository): off;
//   - aliases: git never lets an alias replace a built-in command, which
//     is all azero runs;
//   - include and includeIf: what they pull in is configuration like any
//     other, below the command line;
//   - uploadpack.packObjectsHook and core.alternateRefsCommand: read only
//     from the system's, the user's or the command line's configuration
//     (the first) or only when serving a fetch (the second); azero serves
//     none.
//
// What configuration cannot switch off: clean, smudge and process filters
// and merge drivers, which a repository's .gitattributes names by a name
// of its own choosing (git-lfs is one). A planted one lives in the shared
// git directory's config, which package integrity checks unchanged after
// every run of the change's code, before azero's next git call.
var protection = []struct{ Key, Value string }{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", NoHooks},
	{"core.untrackedCache", "false"},
	{"core.editor", ":"},
	{"core.pager", "cat"},
	{"core.sshCommand", "false"},
	{"credential.helper", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"submodule.recurse", "false"},
}

// protect appends protection (but the key except) to env after the
// configuration env already passes (a GIT_CONFIG_COUNT of its own, from a
// git hook that started azero, say), so both apply and protection wins.
func protect(env []string, except string) []string {
	n := 0
	if v := getenv(env, "GIT_CONFIG_COUNT"); v != "" {
		if c, err := strconv.Atoi(v); err == nil && c > 0 {
			n = c
		}
	}
	out := slices.Grow(slices.Clone(env), 2*len(protection)+1)
	for _, p := range protection {
		if p.Key == except {
			continue
		}
		i := strconv.Itoa(n)
		out = append(out, "GIT_CONFIG_KEY_"+i+"="+p.Key, "GIT_CONFIG_VALUE_"+i+"="+p.Value)
		n++
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
}

// getenv reads name from an environment list (the last value wins, as
// os/exec passes it).
func getenv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// diffCommands are git's commands that may show a diff of contents, with a
// repository's external diff or textconv driver.
var diffCommands = map[string]bool{"diff": true, "log": true, "show": true}

// noExternalDiff gives a diff, log or show --no-ext-diff and --no-textconv
// right after the command's name, unless they are there already.
func noExternalDiff(args []string) []string {
	i := commandIndex(args)
	if i < 0 || !diffCommands[args[i]] {
		return args
	}
	var add []string
	for _, flag := range []string{"--no-ext-diff", "--no-textconv"} {
		if !slices.Contains(args[i+1:], flag) {
			add = append(add, flag)
		}
	}
	if len(add) == 0 {
		return args
	}
	out := make([]string, 0, len(args)+len(add))
	out = append(out, args[:i+1]...)
	out = append(out, add...)
	return append(out, args[i+1:]...)
}

// commandIndex finds git's command among args, after git's own options
// (-c NAME=VALUE and -C DIR take a value); -1 when there is none.
func commandIndex(args []string) int {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return -1
}

// HooksDir returns the directory git would run the repository's hooks
// from (core.hooksPath, else .git/hooks of the common git directory),
// absolute: where a hook azero installs for the user's own commits must
// go. It is the one call that asks git without NoHooks in force.
func (r Repo) HooksDir(ctx context.Context) (string, error) {
	args := []string{"rev-parse", "--git-path", "hooks"}
	out, err := r.run(ctx, r.commandExcept(ctx, args, "core.hooksPath"), args)
	if err != nil {
		return "", err
	}
	hooks := strings.TrimSuffix(string(out), "\n")
	if !filepath.IsAbs(hooks) {
		dir := r.Dir
		if dir == "" {
			if dir, err = os.Getwd(); err != nil {
				return "", err
			}
		}
		hooks = filepath.Join(dir, hooks)
	}
	return hooks, nil
}
