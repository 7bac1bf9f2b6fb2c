package shellcmd

import (
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/azero-dev/azero/internal/lazyre"
	"github.com/azero-dev/azero/internal/shell"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Commit is one `git commit` a shell command would run, as far as azero
// can tell without running anything.
type Commit struct {
	// Dir is where git would run, with every cd, git -C, env -C applied;
	// "" when it cannot be known (cd "$X", popd, cd -).
	Dir string
	// All is -a/--all: tracked modifications are committed too.
	All bool
	// Amend is --amend: the commit replaces HEAD, so it takes HEAD's own
	// changes as well.
	Amend bool
	// NoVerify is -n/--no-verify: the repository's commit hooks are skipped.
	NoVerify bool
	// HooksOff says how the command turns the repository's hooks off in
	// another way (git -c core.hooksPath=..., GIT_CONFIG_* variables).
	HooksOff string
	// Pathspecs is set when the commit takes working-tree content beyond
	// the index: paths given, -i/-o, --interactive/--patch,
	// --pathspec-from-file, or arguments appended by xargs.
	Pathspecs bool
	// AfterChanges is set when an earlier git add (or commit) in the
	// command changes the index before this commit runs: the commit then
	// takes working-tree content. Other commands before it that may change
	// files make the commit Uncertain.
	AfterChanges bool
	// Uncertain says why azero cannot fully know what this command
	// commits (a computed command name or argument, GIT_DIR, an alias it
	// cannot read); "" when it can.
	Uncertain string
	// Text is the command as written (Shorten).
	Text string
}

// WorkingTree reports whether the commit may take more than the index:
// then the gate must look at the working tree as well as the index.
func (c Commit) WorkingTree() bool {
	return c.All || c.Pathspecs || c.AfterChanges || c.Uncertain != ""
}

// AliasResolver returns the value of git's alias.NAME as configured for
// the repository in dir (ok false when there is none).
type AliasResolver func(dir, name string) (value string, ok bool, err error)

// CommitScanner finds the git commits in a shell command.
type CommitScanner struct {
	Cwd     string        // where the command starts
	Home    string        // for cd without arguments and ~
	Aliases AliasResolver // nil: git aliases are never commits
}

// maxDepth bounds the nesting of sh -c, eval and alias expansions.
const maxDepth = 8

// maxText bounds Commit.Text.
const maxText = 300

// Commits returns every git commit the command would run, in order. It
// never runs anything. A command it cannot parse but that mentions both
// git and commit is reported as an uncertain commit, never ignored.
func (sc CommitScanner) Commits(command string) []Commit {
	s := &scan{sc: sc}
	s.script(command, &shellState{dir: filepath.Clean(sc.Cwd), known: sc.Cwd != ""}, 0)
	return s.commits
}

type scan struct {
	sc      CommitScanner
	commits []Commit
}

// shellState is what earlier commands change for later ones.
type shellState struct {
	dir    string
	known  bool   // dir is known
	staged bool   // an earlier git add: the commit takes working-tree content
	opaque string // an earlier command that may change files in ways azero cannot foresee
}

// absorb takes into st what commands that ran in o (a subshell, a
// branch) did to the index and the files.
func (st *shellState) absorb(o shellState) {
	st.staged = st.staged || o.staged
	if st.opaque == "" {
		st.opaque = o.opaque
	}
}

// ran notes a command azero cannot foresee the effects of.
func (st *shellState) ran(what string) {
	if st.opaque == "" {
		st.opaque = Shorten(what)
	}
}

var mentionsCommit = lazyre.New(`\bgit\b[\s\S]*\bcommit\b`)

// script parses and walks src.
func (s *scan) script(src string, st *shellState, depth int) {
	if depth > maxDepth {
		if mentionsCommit().MatchString(src) {
			s.uncertain(st, src, "the command nests shells too deeply for azero to follow")
		}
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if mentionsCommit().MatchString(src) {
			s.uncertain(st, src, "azero cannot parse this shell command, and it may run git commit")
		}
		return
	}
	w := walker{s: s, src: src, depth: depth}
	w.stmts(f.Stmts, st)
}

func (s *scan) uncertain(st *shellState, text, why string) {
	c := Commit{Uncertain: why, Text: Shorten(text), AfterChanges: st.staged}
	if st.known {
		c.Dir = st.dir
	}
	s.commits = append(s.commits, c)
}

// walker walks one parsed script in execution order.
type walker struct {
	s     *scan
	src   string
	depth int
}

func (w walker) stmts(list []*syntax.Stmt, st *shellState) {
	for _, x := range list {
		w.stmt(x, st)
	}
}

// branch runs list as code that may or may not run: a directory change
// inside it leaves the directory unknown afterwards.
func (w walker) branch(list []*syntax.Stmt, st *shellState) {
	cp := *st
	w.stmts(list, &cp)
	st.merge(cp)
}

// merge takes what a branch did into the state after it.
func (st *shellState) merge(b shellState) {
	if b.known != st.known || b.dir != st.dir {
		st.known, st.dir = false, ""
	}
	st.absorb(b)
}

func (w walker) stmt(x *syntax.Stmt, st *shellState) {
	if x == nil {
		return
	}
	for _, r := range x.Redirs {
		w.substs(r, st)
	}
	switch c := x.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, st)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each side of a pipe runs in its own subshell.
			l, r := *st, *st
			w.stmt(c.X, &l)
			w.stmt(c.Y, &r)
			st.absorb(l)
			st.absorb(r)
			return
		}
		w.stmt(c.X, st)
		w.stmt(c.Y, st)
	case *syntax.Subshell:
		cp := *st
		w.stmts(c.Stmts, &cp)
		st.absorb(cp)
	case *syntax.Block:
		w.stmts(c.Stmts, st)
	case *syntax.IfClause:
		w.ifClause(c, st)
	case *syntax.WhileClause:
		w.stmts(c.Cond, st)
		w.branch(c.Do, st)
	case *syntax.ForClause:
		w.substs(c.Loop, st)
		w.branch(c.Do, st)
	case *syntax.CaseClause:
		w.substs(c.Word, st)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.substs(p, st)
			}
			w.branch(it.Stmts, st)
		}
	case *syntax.FuncDecl:
		// The body may run later, anywhere: walk it as it would run now.
		cp := *st
		w.stmt(c.Body, &cp)
	case *syntax.TimeClause:
		w.stmt(c.Stmt, st)
	case *syntax.CoprocClause:
		cp := *st
		w.stmt(c.Stmt, &cp)
	case *syntax.DeclClause:
		for _, a := range c.Args {
			w.substs(a, st)
		}
		if c.Variant != nil && c.Variant.Value == "export" {
			w.exported(c.Args, st)
		}
	default:
		w.substs(c, st)
	}
	for _, r := range x.Redirs {
		if w.writesFile(r) {
			st.ran(w.text(x))
		}
	}
}

// writesFile reports whether a redirection writes a file (/dev/null and
// file descriptors aside).
func (w walker) writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll, syntax.DplOut:
	default:
		return false
	}
	if r.Word == nil {
		return false
	}
	target := w.word(r.Word)
	if !target.known {
		return true
	}
	if r.Op == syntax.DplOut && (target.val == "-" || strings.Trim(target.val, "0123456789") == "") {
		return false
	}
	return target.val != "/dev/null"
}

func (w walker) ifClause(c *syntax.IfClause, st *shellState) {
	w.stmts(c.Cond, st)
	w.branch(c.Then, st)
	if c.Else != nil {
		cp := *st
		w.ifClause(c.Else, &cp)
		st.merge(cp)
	}
}

// substs walks the command substitutions inside node, each in its own
// subshell, as they run before the command that holds them.
func (w walker) substs(node syntax.Node, st *shellState) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		var list []*syntax.Stmt
		switch n := n.(type) {
		case *syntax.CmdSubst:
			list = n.Stmts
		case *syntax.ProcSubst:
			list = n.Stmts
		default:
			return true
		}
		cp := *st
		w.stmts(list, &cp)
		st.absorb(cp) // it ran before the command holding it
		return false
	})
}

// exported notes `export GIT_DIR=...` and the like for later commands.
func (w walker) exported(args []*syntax.Assign, st *shellState) {
	for _, a := range args {
		if a.Name != nil && gitEnvMatters(a.Name.Value) != "" {
			// Every later git runs elsewhere or with other settings.
			st.known, st.dir = false, ""
		}
	}
}

// word is one argument: its value when it is known before the command
// runs, and how it was written.
type word struct {
	val   string
	known bool
	raw   string
}

func (w walker) words(list []*syntax.Word) []word {
	out := make([]word, len(list))
	for i, x := range list {
		out[i] = w.word(x)
	}
	return out
}

func (w walker) word(x *syntax.Word) word {
	raw := w.text(x)
	dynamic := false
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			dynamic = true
			return false
		}
		return true
	})
	if dynamic {
		return word{raw: raw}
	}
	v, ok := w.literal(x)
	if !ok {
		return word{raw: raw}
	}
	return word{val: v, known: true, raw: raw}
}

// literal is the value of a word without expansions: quotes removed,
// backslash escapes resolved, a leading ~ replaced by the home directory.
func (w walker) literal(x *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range x.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value)
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) && strings.HasPrefix(p.Value, "~") {
				v = w.s.sc.Home + v[1:]
			}
			b.WriteString(v)
		default:
			// A Config of its own: given nil, expand prepares one shared
			// zero Config in place, a data race between two scans.
			v, err := expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{part}})
			if err != nil {
				return "", false
			}
			b.WriteString(v)
		}
	}
	return b.String(), true
}

// unescape resolves the backslashes of an unquoted word part: \x is x,
// and a backslash before a newline joins the lines.
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// text is the source of a node, for messages.
func (w walker) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return ""
	}
	return w.src[start:end]
}

func (w walker) call(c *syntax.CallExpr, st *shellState) {
	for _, a := range c.Assigns {
		w.substs(a, st)
	}
	for _, a := range c.Args {
		w.substs(a, st)
	}
	env := map[string]string{}
	for _, a := range c.Assigns {
		if a.Name == nil {
			continue
		}
		v := ""
		if a.Value != nil {
			v = w.word(a.Value).val
		}
		env[a.Name.Value] = v
	}
	if len(c.Args) == 0 {
		w.exported(c.Assigns, st)
		return
	}
	w.command(w.words(c.Args), env, st, Shorten(w.text(c)))
}

// command interprets one simple command: its name and arguments.
func (w walker) command(args []word, env map[string]string, st *shellState, text string) {
	if len(args) == 0 {
		return
	}
	name := args[0]
	if !name.known {
		for _, a := range args[1:] {
			if a.known && a.val == "commit" {
				w.s.uncertain(st, text, "the command's name ("+name.raw+") is computed when it runs, and it may be git commit")
				return
			}
		}
		// An unknown program may change anything.
		st.ran(text)
		return
	}
	rest := args[1:]
	switch path.Base(name.val) {
	case "cd", "pushd":
		st.cd(rest, w.s.sc.Home)
	case "popd":
		st.known, st.dir = false, ""
	case "git":
		w.git(rest, env, st, text)
	case "env":
		w.env(rest, env, st, text)
	case "command":
		if len(rest) > 0 && rest[0].known && (rest[0].val == "-v" || rest[0].val == "-V") {
			return // only looks the name up
		}
		w.command(skipOptions(rest, nil), env, st, text)
	case "builtin", "exec", "nohup", "chronic":
		w.command(skipOptions(rest, optArgs("a")), env, st, text)
	case "time":
		w.command(skipOptions(rest, optArgs("f", "o")), env, st, text)
	case "nice":
		w.command(skipOptions(rest, optArgs("n")), env, st, text)
	case "ionice":
		w.command(skipOptions(rest, optArgs("c", "n", "p")), env, st, text)
	case "stdbuf":
		w.command(skipOptions(rest, optArgs("i", "o", "e")), env, st, text)
	case "doas":
		w.command(skipOptions(rest, optArgs("u", "C")), env, st, text)
	case "sudo":
		w.sudo(rest, env, st, text)
	case "timeout":
		rest = skipOptions(rest, optArgs("s", "k"))
		if len(rest) > 0 {
			w.command(rest[1:], env, st, text) // the duration
		}
	case "xargs":
		w.xargs(rest, env, st, text)
	case "find":
		w.find(rest, env, st, text)
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash":
		w.shell(rest, st, text)
	case "eval":
		vals := make([]string, 0, len(rest))
		for _, a := range rest {
			if !a.known {
				if strings.Contains(text, "commit") {
					w.s.uncertain(st, text, "eval runs text computed when the command runs, and it may run git commit")
				}
				st.ran(text)
				return
			}
			vals = append(vals, a.val)
		}
		w.s.script(strings.Join(vals, " "), st, w.depth+1)
	default:
		if !readOnly(path.Base(name.val), rest) {
			st.ran(text)
		}
	}
}

// readOnlyCommands change no file (unless redirected, which stmt sees).
var readOnlyCommands = newWordSet(`ls cat echo printf pwd true false test [ : grep egrep fgrep rg ag head tail wc
	which type whoami id date sleep basename dirname realpath readlink stat file diff cmp tree du df uname
	hostname tr cut uniq jq less more nl od hexdump md5sum sha1sum sha256sum shasum column expr seq yes
	printenv set export local declare read wait jobs history help`)

// wordSet is a set of words built the first time it is asked: every
// azero command loads this package, few judge a shell command.
type wordSet func() map[string]bool

func newWordSet(words ...string) wordSet {
	return sync.OnceValue(func() map[string]bool {
		set := map[string]bool{}
		for _, list := range words {
			for _, w := range strings.Fields(list) {
				set[w] = true
			}
		}
		return set
	})
}

func (s wordSet) has(w string) bool { return s()[w] }

// readOnly reports whether a command changes no file: a read-only
// utility, or sed and sort without their in-place or output options.
func readOnly(name string, args []word) bool {
	switch name {
	case "sed", "sort":
		for _, a := range args {
			if !a.known {
				return false
			}
			v := a.val
			if name == "sed" && (strings.HasPrefix(v, "-i") || strings.HasPrefix(v, "--in-place")) ||
				name == "sort" && (strings.HasPrefix(v, "-o") || strings.HasPrefix(v, "--output")) {
				return false
			}
		}
		return true
	}
	return readOnlyCommands.has(name)
}

// cd applies a cd or pushd to the state.
func (st *shellState) cd(args []word, home string) {
	args = skipOptions(args, nil)
	target := home
	if len(args) > 0 {
		if !args[0].known || args[0].val == "-" {
			st.known, st.dir = false, ""
			return
		}
		target = args[0].val
	}
	st.chdir(target)
}

// chdir moves the state's directory to dir (relative to it).
func (st *shellState) chdir(dir string) {
	switch {
	case dir == "":
		if st.dir == "" {
			st.known = false
		}
	case filepath.IsAbs(dir):
		st.dir, st.known = filepath.Clean(dir), true
	case st.known:
		st.dir = filepath.Join(st.dir, dir)
	}
}

// optArgs lists the short options that take an argument.
func optArgs(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// skipOptions drops leading options (and the arguments of those in
// withArg, given separately) and a "--".
func skipOptions(args []word, withArg map[string]bool) []word {
	for len(args) > 0 {
		a := args[0]
		if !a.known || !strings.HasPrefix(a.val, "-") || a.val == "-" {
			return args
		}
		args = args[1:]
		if a.val == "--" {
			return args
		}
		if !strings.HasPrefix(a.val, "--") && len(a.val) == 2 && withArg[a.val[1:]] && len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// env interprets env [OPTIONS] [NAME=VALUE]... COMMAND.
func (w walker) env(args []word, env map[string]string, st *shellState, text string) {
	cp := *st
	env = copyEnv(env)
	for len(args) > 0 {
		a := args[0]
		if !a.known {
			break
		}
		switch {
		case a.val == "--":
			args = args[1:]
			w.command(args, env, &cp, text)
			return
		case a.val == "-C" || a.val == "--chdir":
			if len(args) < 2 || !args[1].known {
				cp.known, cp.dir = false, ""
				args = args[min(2, len(args)):]
				continue
			}
			cp.chdir(args[1].val)
			args = args[2:]
			continue
		case strings.HasPrefix(a.val, "--chdir="):
			cp.chdir(strings.TrimPrefix(a.val, "--chdir="))
		case a.val == "-u" || a.val == "--unset":
			args = args[min(2, len(args)):]
			continue
		case a.val == "-S" || a.val == "--split-string" || strings.HasPrefix(a.val, "--split-string="):
			// The rest is a command line to split: treat it as a script.
			line, more := strings.TrimPrefix(a.val, "--split-string="), args[1:]
			if !strings.HasPrefix(a.val, "--split-string=") {
				if len(args) < 2 {
					return
				}
				if !args[1].known {
					w.s.uncertain(&cp, text, "env -S runs a command line computed when it runs")
					return
				}
				line, more = args[1].val, args[2:]
			}
			for _, r := range more {
				line += " " + shell.Quote(r.val)
			}
			w.s.script(line, &cp, w.depth+1)
			st.absorb(cp)
			return
		case strings.HasPrefix(a.val, "-"):
		case strings.Contains(a.val, "="):
			k, v, _ := strings.Cut(a.val, "=")
			env[k] = v
		default:
			w.command(args, env, &cp, text)
			st.absorb(cp)
			return
		}
		args = args[1:]
	}
	if len(args) > 0 {
		w.command(args, env, &cp, text)
	}
	st.absorb(cp)
}

// sudo interprets sudo [OPTIONS] COMMAND (-D changes the directory).
func (w walker) sudo(args []word, env map[string]string, st *shellState, text string) {
	cp := *st
	withArg := optArgs("u", "g", "p", "C", "r", "t", "U", "T", "h")
	for len(args) > 0 && args[0].known && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		a := args[0]
		args = args[1:]
		if a.val == "--" {
			break
		}
		switch {
		case a.val == "-D" || a.val == "--chdir":
			if len(args) > 0 && args[0].known {
				cp.chdir(args[0].val)
			} else {
				cp.known, cp.dir = false, ""
			}
			args = args[min(1, len(args)):]
		case strings.HasPrefix(a.val, "--chdir="):
			cp.chdir(strings.TrimPrefix(a.val, "--chdir="))
		case len(a.val) == 2 && withArg[a.val[1:]] && len(args) > 0:
			args = args[1:]
		}
	}
	w.command(args, env, &cp, text)
	st.absorb(cp)
}

// xargs interprets xargs [OPTIONS] COMMAND [ARGS]: the command gets more
// arguments from stdin.
func (w walker) xargs(args []word, env map[string]string, st *shellState, text string) {
	args = skipOptions(args, optArgs("I", "L", "n", "P", "d", "E", "s", "a"))
	if len(args) == 0 {
		return
	}
	before := len(w.s.commits)
	w.command(args, env, st, text)
	for i := before; i < len(w.s.commits); i++ {
		w.s.commits[i].Pathspecs = true
		if w.s.commits[i].Uncertain == "" {
			w.s.commits[i].Uncertain = "xargs appends arguments read from its input, which azero cannot see"
		}
	}
}

// find interprets the commands of find's -exec, -execdir, -ok and -okdir.
func (w walker) find(args []word, env map[string]string, st *shellState, text string) {
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			continue
		}
		switch args[i].val {
		case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			st.ran(text)
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].known && (args[j].val == ";" || args[j].val == "+")) {
				j++
			}
			cp := *st
			if args[i].val == "-execdir" || args[i].val == "-okdir" {
				cp.known, cp.dir = false, ""
			}
			w.command(args[i+1:j], env, &cp, text)
			st.absorb(cp)
			i = j
		}
	}
}

// shell interprets sh -c SCRIPT (and bash, zsh...): the script is parsed
// and walked like the command itself.
func (w walker) shell(args []word, st *shellState, text string) {
	for i, a := range args {
		if !a.known {
			break
		}
		if !strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "--") {
			if a.val == "-o" || a.val == "+o" {
				continue
			}
			break
		}
		if !strings.Contains(a.val[1:], "c") {
			continue
		}
		// The first argument after the options is the script.
		for _, b := range args[i+1:] {
			if b.known && strings.HasPrefix(b.val, "-") {
				continue
			}
			if !b.known {
				if strings.Contains(text, "commit") {
					w.s.uncertain(st, text, "the shell runs a script computed when the command runs, and it may run git commit")
				}
				st.ran(text)
				return
			}
			cp := *st
			w.s.script(b.val, &cp, w.depth+1)
			st.absorb(cp)
			return
		}
		return
	}
	// A script file or stdin: its content is not in the command.
	if strings.Contains(text, "commit") && mentionsCommit().MatchString(text) {
		w.s.uncertain(st, text, "the shell runs a script azero cannot see, and the command mentions git commit")
	}
	st.ran(text)
}

func copyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// Shorten cuts a command line (trimmed) to its first maxText bytes, on a
// character boundary, marked with "…": Commit.Text, and what callers
// record of the command, are never longer.
func Shorten(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }
