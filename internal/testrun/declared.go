package testrun

import (
	"path"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// DeclaredTests lists the tests a test file declares, read from its text
// by the conventions of its language (chosen by path's extension), in file
// order; a name declared twice is listed twice:
//
//   - Python: top-level `def test*` functions ("test_add") and the
//     `def test*` methods of top-level classes ("TestCalc::test_add"),
//     async ones too, as pytest and unittest collect them;
//   - Go: `func TestX(t *testing.T)`, `BenchmarkX`, `ExampleX` and
//     `FuzzX` at the top level ("TestAdd");
//   - JavaScript and TypeScript: the titles of test(), it(), describe()
//     and suite() calls, with their modifiers (.only, .skip, .each(...),
//     ...), as `it "adds two numbers"`;
//   - Rust: the functions after a #[test] attribute (or a test attribute
//     of a framework: #[tokio::test], #[rstest], #[test_case(...)]).
//
// It reads lines, not a syntax tree: it runs on any text (a file that does
// not build, the file at the base commit), and may miss a test declared in
// an unusual way, never invent one from code that is not a declaration.
// Other languages give nil.
func DeclaredTests(file, content string) []string {
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	switch strings.ToLower(path.Ext(file)) {
	case ".py":
		return pythonTests(lines)
	case ".go":
		return goTests(lines)
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return jsTests(lines)
	case ".rs":
		return rustTests(lines)
	}
	return nil
}

// RemovedTests lists the tests before declares that after does not (each
// as often as before declares it more often than after): tests removed or
// renamed by a change of the file, by DeclaredTests' reading.
func RemovedTests(file, before, after string) []string {
	left := map[string]int{}
	for _, name := range DeclaredTests(file, after) {
		left[name]++
	}
	var out []string
	for _, name := range DeclaredTests(file, before) {
		if left[name] > 0 {
			left[name]--
			continue
		}
		out = append(out, name)
	}
	return out
}

var (
	pyClass = lazyre.New(`^class\s+([A-Za-z_]\w*)`)
	pyDef   = lazyre.New(`^(\s*)(?:async\s+)?def\s+(test\w*)\s*\(`)
)

func pythonTests(lines []string) []string {
	var out []string
	class := ""
	quote := "" // the triple quote of a string spanning lines, when inside one
	for _, l := range lines {
		if quote != "" {
			if strings.Count(l, quote)%2 == 1 {
				quote = ""
			}
			continue
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(l, q)%2 == 1 {
				quote = q
			}
		}
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			class = ""
			if m := pyClass().FindStringSubmatch(l); m != nil {
				class = m[1]
			}
		}
		m := pyDef().FindStringSubmatch(l)
		switch {
		case m == nil:
		case m[1] == "":
			out = append(out, m[2])
		case class != "":
			out = append(out, class+"::"+m[2])
		}
	}
	return out
}

var goTestDecl = lazyre.New(`^func\s+((?:Test|Benchmark|Fuzz)(?:[^a-z\s(]\w*)?|Example\w*)\s*\(`)

func goTests(lines []string) []string {
	var out []string
	for _, l := range lines {
		if m := goTestDecl().FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// jsTest finds a test's title: the call, its modifiers, and the title in
// quotes of any kind.
var jsTest = lazyre.New("(?:^|[^\\w.$])(describe|it|test|suite)((?:\\.(?:only|skip|todo|concurrent|sequential|fails|each\\s*(?:\\([^()]*\\)|`[^`]*`)))*)\\s*\\(\\s*(?:'((?:\\\\.|[^'\\\\])*)'|\"((?:\\\\.|[^\"\\\\])*)\"|`((?:\\\\.|[^`\\\\])*)`)")

func jsTests(lines []string) []string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/*") {
			continue
		}
		for _, m := range jsTest().FindAllStringSubmatch(l, -1) {
			out = append(out, m[1]+" "+`"`+m[3]+m[4]+m[5]+`"`)
		}
	}
	return out
}

var (
	rustTestAttr = lazyre.New(`^#\[(?:test|[\w:]*::test|rstest|test_case|test_log::test|quickcheck|proptest)\b`)
	rustFn       = lazyre.New(`^(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)`)
)

func rustTests(lines []string) []string {
	var out []string
	pending := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "//"):
		case rustTestAttr().MatchString(t):
			pending = true
		case strings.HasPrefix(t, "#["):
			// Another attribute (#[should_panic], #[ignore]) between the
			// test attribute and its function.
		case pending:
			if m := rustFn().FindStringSubmatch(t); m != nil {
				out = append(out, m[1])
			}
			pending = false
		}
	}
	return out
}
