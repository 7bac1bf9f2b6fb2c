package cli

// The README's snippets, tested as written: every fenced block of
// README.md carries a marker (<!-- test: KIND -->) on the line before it,
// saying what the block is, and TestREADMESnippets tests each as a user
// would use it, so the README and azero cannot drift apart.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// readmeSnippet is one fenced block of README.md.
type readmeSnippet struct {
	line int    // the opening fence's line
	info string // the fence's info string: sh, toml, markdown...
	kind string // the marker's kind: "design", "sh parse", "TestName"...
	note string // the marker's words in parentheses
	body string // the block, without the fence's indentation
}

func (s readmeSnippet) String() string { return fmt.Sprintf("README.md:%d (%s)", s.line, s.kind) }

var markerRe = regexp.MustCompile(`^<!-- test: ([^()]+?)\s*(?:\((.*)\))?\s*-->$`)

// readmeSnippets reads every fenced block of README.md, nested in a list
// or not, with the marker before it; a block without one fails the test.
func readmeSnippets(t *testing.T) []readmeSnippet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out []readmeSnippet
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		indent := len(lines[i]) - len(trimmed)
		open := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		if open < 3 {
			continue
		}
		s := readmeSnippet{line: i + 1, info: strings.TrimSpace(trimmed[open:])}
		if i > 0 {
			if m := markerRe.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				s.kind, s.note = m[1], m[2]
			}
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			l := strings.TrimPrefix(lines[j], strings.Repeat(" ", indent))
			if n := len(l) - len(strings.TrimLeft(l, "`")); n >= open && strings.TrimSpace(l[n:]) == "" {
				break
			}
			body = append(body, l)
		}
		s.body = strings.Join(body, "\n") + "\n"
		if s.kind == "" {
			t.Errorf("README.md:%d: a %s block without a <!-- test: KIND --> marker on the line before it", s.line, s.info)
		}
		out = append(out, s)
		i = j
	}
	if len(out) < 20 {
		t.Fatalf("read %d blocks from README.md", len(out))
	}
	return out
}

// TestREADMESnippets tests every block of the README by its kind.
func TestREADMESnippets(t *testing.T) {
	t.Parallel()
	snippets := readmeSnippets(t)
	tests := testFunctions(t)
	for i, s := range snippets {
		t.Run(fmt.Sprintf("line %d %s", s.line, s.kind), func(t *testing.T) {
			switch kind, arg, _ := strings.Cut(s.kind, " "); kind {
			case "config":
				checkConfigSnippet(t, s, arg == "user")
			case "design":
				t.Parallel()
				checkDesignSnippet(t, s)
			case "sh":
				switch arg {
				case "parse":
					t.Parallel()
					checkCommandLines(t, s)
				case "first":
					t.Parallel()
					checkFirstCommands(t, s)
				case "run":
					if i+1 >= len(snippets) || snippets[i+1].kind != "claude-settings" {
						t.Fatalf("%s: the only block run as written is the hook's installation, followed by the settings it writes", s)
					}
					t.Parallel()
					checkHookInstallation(t, s, snippets[i+1])
				case "api":
					t.Parallel()
					checkServeAPI(t, s)
				default:
					t.Fatalf("%s: unknown kind of shell block %q", s, arg)
				}
			case "claude-settings":
				if i == 0 || snippets[i-1].kind != "sh run" {
					t.Errorf("%s: the settings must follow the commands that write them", s)
				}
			case "mcp-client":
				checkMCPClient(t, s)
			case "external":
				if s.note == "" {
					t.Errorf("%s: an external block says whose it is", s)
				}
			default:
				if !strings.HasPrefix(kind, "Test") || !tests[kind] {
					t.Errorf("%s: %q is neither a kind this test knows nor a test of this package", s, s.kind)
				}
			}
		})
	}
}

// testFunctions are the names of this package's test functions.
func testFunctions(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
	}
	return names
}

// checkConfigSnippet parses a configuration block strictly, as the user's
// file; a block for any config also as a repository's, and a block of
// user-only settings is refused there.
func checkConfigSnippet(t *testing.T, s readmeSnippet, userOnly bool) {
	if s.info != "toml" {
		t.Fatalf("%s: a config block is toml, not %q", s, s.info)
	}
	if _, err := config.Parse([]byte(s.body), config.Source{Path: "~/.config/azero/config.toml"}); err != nil {
		t.Errorf("%s as your user file: %v", s, err)
	}
	_, err := config.Parse([]byte(s.body), config.Source{Path: ".azero/config.toml", Repo: true})
	switch {
	case userOnly && err == nil:
		t.Errorf("%s is marked user-only, but a repository's file may hold it", s)
	case !userOnly && err != nil:
		t.Errorf("%s as a repository's file: %v", s, err)
	}
}

// checkDesignSnippet checks a design document as azero implement does
// before any model call (lld.Parse, lld.Check) in a repository holding the
// files it modifies and the directories of those it adds. It must be a
// whole document: a title, its Files Changed heading, test files first.
func checkDesignSnippet(t *testing.T, s readmeSnippet) {
	if s.info != "markdown" {
		t.Fatalf("%s: a design is markdown, not %q", s, s.info)
	}
	if !regexp.MustCompile(`(?m)^#{1,6} .*Files Changed`).MatchString(s.body) {
		t.Errorf("%s: not a whole design document: no Files Changed heading", s)
	}
	doc, err := lld.Parse(s.body)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	if doc.Title == "" {
		t.Errorf("%s: a design without a title", s)
	}
	root := t.TempDir()
	for _, f := range doc.Files {
		switch f.ChangeName {
		case "Modify", "Delete":
			testenv.WriteFiles(t, root, map[string]string{f.Path: "existing\n"})
		case "Add":
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(pathpkg.Dir(f.Path))), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := lld.Check(doc, root)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	tests := 0
	for i, f := range files {
		if f.IsTest() {
			tests++
			if i >= tests {
				t.Errorf("%s: the test file %s comes after a code file: test files first", s, f.Path)
			}
		}
	}
	if tests == 0 || tests == len(files) {
		t.Errorf("%s: %d test files of %d: want tests and code", s, tests, len(files))
	}
}

// commandLines splits a shell block into command lines: continuations
// joined, comments and blank lines dropped, each split into words.
func commandLines(t *testing.T, body string) [][]string {
	t.Helper()
	var out [][]string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\\\n", " "), "\n") {
		words, err := shellWords(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// shellWords splits one line as sh does for the words of a simple
// command: quotes, backslashes, and a comment from an unquoted #.
func shellWords(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word is under way
		quote byte
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line):
				i++
				cur.WriteByte(line[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			i = len(line)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// checkCommandLines parses every azero command line of a block with
// azero's own command tree (the command, its flags, its arguments), and
// checks that go install and go run name azero's main package: blocks
// that need a model, the network or a cluster, or run until stopped.
func checkCommandLines(t *testing.T, s readmeSnippet) {
	if s.info != "sh" {
		t.Fatalf("%s: a shell block is sh, not %q", s, s.info)
	}
	checked := 0
	for _, words := range commandLines(t, s.body) {
		// VAR=value prefixes set the environment of the command.
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			words = words[1:]
		}
		switch {
		case len(words) > 0 && words[0] == "azero":
			parseAzeroLine(t, s, words[1:])
			checked++
		case len(words) > 2 && words[0] == "go" && (words[1] == "install" || words[1] == "run"):
			pkg, _, _ := strings.Cut(words[2], "@")
			if pkg != azeroMainPkg && pkg != "./cmd/azero" {
				t.Errorf("%s: %s names %s, not azero's main package %s", s, strings.Join(words, " "), pkg, azeroMainPkg)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Errorf("%s: no azero command line to check", s)
	}
}

// parseAzeroLine checks that args is a command line azero takes: a command
// it has, with flags it has and the arguments it wants.
func parseAzeroLine(t *testing.T, s readmeSnippet, args []string) {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	f := &Factory{IO: io, Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: t.TempDir(), Now: time.Now, Version: "test"}
	root := NewRootCommand(f)
	line := "azero " + strings.Join(args, " ")
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		t.Errorf("%s: %s: no such command (%v)", s, line, err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %s: %v", s, line, err)
		return
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			t.Errorf("%s: %s: %v", s, line, err)
		}
	}
}

// checkFirstCommands runs the README's first command as written, from the
// checkout without a terminal: go run prints azero's exit status 3 and
// exits 1, and the resume hint names go run; that hint, run as printed on
// a real terminal, asks the final review and merges. The second command is
// this very test suite.
func checkFirstCommands(t *testing.T, s readmeSnippet) {
	testenv.RequireTool(t, "go")
	lines := commandLines(t, s.body)
	if len(lines) != 2 || strings.Join(lines[0], " ") != "go run ./cmd/azero demo" || strings.Join(lines[1], " ") != "go test -timeout 30m ./..." {
		t.Fatalf("%s: the first commands are %q", s, lines)
	}
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	state, tmp := t.TempDir(), t.TempDir()
	first := strings.SplitN(s.body, "\n", 2)[0]
	env := append(goRunEnv(state), "TMPDIR="+tmp)
	cmd := withoutTerminal(exec.Command("sh", "-c", first))
	cmd.Dir, cmd.Env = checkout, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if code := exitCode(err); code != 1 || !strings.Contains(stderr.String(), "\nexit status 3\n") {
		t.Fatalf("go run ./cmd/azero demo without a terminal: exit %d, want go run's 1 after \"exit status 3\":\n%s", code, stderr.String())
	}
	r := onlyRun(t, state)
	hint := "go run ./cmd/azero resume " + r.ID
	if !strings.Contains(stderr.String(), "resume it from a terminal with: "+hint+"\n") {
		t.Fatalf("the hint does not name %q:\n%s", hint, stderr.String())
	}
	screen := startOnTerminal(t, checkout, env, "sh", "-c", hint)
	screen.WaitFor(t, "to merge it", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != 0 || !strings.Contains(screen.Text(), "Merged azero/") {
		t.Fatalf("the hint, run as printed: exit %d\n%s", code, screen.Text())
	}
	if got := onlyRun(t, state); got.Status != store.StatusDone {
		t.Errorf("the demo run is %s", got.Status)
	}
}

// goRunEnv is azeroEnv for azero built by go run: not this test binary.
func goRunEnv(state string) []string {
	return slices.DeleteFunc(azeroEnv(state), func(kv string) bool { return kv == "AZERO_TEST_MAIN=1" })
}

// checkHookInstallation runs the README's hook installation as written
// in a repository, with the azero on the PATH this test binary and HOME a
// temporary directory, and compares what it wrote in the repository and
// in your Claude Code settings with the README's settings.
func checkHookInstallation(t *testing.T, s, settings readmeSnippet) {
	repo := testenv.NewRepo(t, map[string]string{"README.md": "x\n"})
	home, bin := t.TempDir(), t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "azero")); err != nil {
		t.Fatal(err)
	}
	cmd := withoutTerminal(exec.Command("sh", "-e", "-c", s.body))
	cmd.Dir = repo
	cmd.Env = azeroEnv(t.TempDir(), "HOME="+home, "CLAUDE_CONFIG_DIR=", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", s, err, out)
	}
	var want any
	if err := json.Unmarshal([]byte(settings.body), &want); err != nil {
		t.Fatalf("%s: %v", settings, err)
	}
	for _, p := range []string{filepath.Join(repo, ".claude", "settings.json"), filepath.Join(home, ".claude", "settings.json")} {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			t.Errorf("%s holds\n%s\nwhile %s shows\n%s", p, raw, settings, settings.body)
		}
	}
}

// checkServeAPI runs the README's API calls as written against a real
// azero serve (on a free port instead of 7077) with the demo waiting at its
// final review (RUN): the last call approves it, and serve merges it.
func checkServeAPI(t *testing.T, s readmeSnippet) {
	testenv.RequireTool(t, "go")
	testenv.RequireTool(t, "curl")
	home := t.TempDir()
	state, base := filepath.Join(home, ".local", "state", "azero"), t.TempDir()
	demo := runAzeroIn(t, state, base, nil, "demo", "--dir", base)
	if demo.code != ExitNeedsHuman {
		t.Fatalf("demo: exit %d\n%s", demo.code, demo.stderr)
	}
	id := onlyRun(t, state).ID
	srv := startServe(t, state)
	script := strings.ReplaceAll(s.body, "http://127.0.0.1:7077", srv.base)
	script = strings.ReplaceAll(script, "/api/runs/RUN", "/api/runs/"+id)
	if script == s.body || !strings.Contains(s.body, "/api/runs/RUN/answer") {
		t.Fatalf("%s: the calls no longer name http://127.0.0.1:7077 and RUN:\n%s", s, s.body)
	}
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", s, err, out)
	}
	for _, want := range []string{`"runs"`, `"run_id": "` + id + `"`, `"question"`, `"decision"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("%s: the answers lack %s:\n%s", s, want, out)
		}
	}
	for deadline := time.Now().Add(testenv.Patience); !runByID(t, state, id).Status.Finished(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not continue the approved run:\n%s", srv.stderr)
		}
	}
	if r := runByID(t, state, id); r.Status != store.StatusDone {
		t.Errorf("the approved run ended %s: %s", r.Status, r.Error)
	}
}

// checkMCPClient reads an MCP client's configuration (JSON or Codex's
// TOML) and parses the azero command it starts.
func checkMCPClient(t *testing.T, s readmeSnippet) {
	var server struct {
		Command string   `json:"command" toml:"command"`
		Args    []string `json:"args" toml:"args"`
	}
	switch s.info {
	case "json":
		var doc struct {
			Servers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(s.body), &doc); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if err := json.Unmarshal(doc.Servers["azero"], &server); err != nil {
			t.Fatalf("%s: mcpServers.azero: %v", s, err)
		}
	case "toml":
		var doc struct {
			MCP map[string]struct {
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
			} `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal([]byte(s.body), &doc); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		server.Command, server.Args = doc.MCP["azero"].Command, doc.MCP["azero"].Args
	default:
		t.Fatalf("%s: an MCP client's configuration is json or toml, not %q", s, s.info)
	}
	if server.Command != "azero" || len(server.Args) == 0 || server.Args[0] != "mcp" {
		t.Fatalf("%s: starts %q %q, want azero mcp", s, server.Command, server.Args)
	}
	parseAzeroLine(t, s, server.Args)
}

// The README's tables of the environment and of the exit codes are the
// ones the man pages and --help print.
func TestREADMETablesAreAzeros(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := func(section, header string) [][2]string {
		_, rest, ok := strings.Cut(string(raw), "\n"+section+"\n")
		if !ok {
			t.Fatalf("README has no %q", section)
		}
		_, rest, ok = strings.Cut(rest, "\n"+header+"\n|---|---|\n")
		if !ok {
			t.Fatalf("README's %q has no table %q", section, header)
		}
		var out [][2]string
		for _, line := range strings.Split(rest, "\n") {
			if !strings.HasPrefix(line, "| ") {
				break
			}
			a, b, _ := strings.Cut(strings.Trim(line, "| "), " | ")
			out = append(out, [2]string{a, b})
		}
		return out
	}
	var env [][2]string
	for _, v := range environment {
		env = append(env, [2]string{v.Names, v.Meaning})
	}
	if got := rows("Environment:", "| variable | meaning |"); !slices.Equal(got, env) {
		t.Errorf("the README's environment table is not the man pages':\nREADME: %q\nman:    %q", got, env)
	}
	root := &cobra.Command{Use: "azero"}
	var codes [][2]string
	for _, ec := range commandExitCodes(root) {
		codes = append(codes, [2]string{fmt.Sprint(ec.Code), ec.Text})
	}
	if got := rows("## Exit codes", "| code | meaning |"); !slices.Equal(got, codes) {
		t.Errorf("the README's exit codes are not --help's:\nREADME: %q\nhelp:   %q", got, codes)
	}
}
