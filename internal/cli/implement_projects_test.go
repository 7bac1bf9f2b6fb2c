package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// More projects as teams lay them out, each run without a terminal up to
// the diff review (exit 3): an ESM jest project that runs jest through
// node as jest's documentation says, a member crate of a Cargo workspace
// that keeps no Cargo.lock, and jest through jest-junit's report, which
// leaves out a test file that cannot load.
func TestImplementMoreProjects(t *testing.T) {
	t.Parallel()
	manifest := func(name string) string {
		return "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	}
	tests := []struct {
		name      string
		tools     []string
		installed []string
		files     map[string]string
		args      []string
		replies   []string
		tests     string // node:outcome of every test run
		prompt    string // in the first scaffold prompt
		changed   string // git status --porcelain of the worktree at the diff review
	}{
		{
			name: "ESM jest through node", tools: []string{"node", "npm", "jest"}, installed: []string{"jest"},
			files: map[string]string{
				"package.json":               `{"name": "wc", "type": "module", "scripts": {"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"}, "devDependencies": {"jest": "^30"}}` + "\n",
				".gitignore":                 "node_modules/\n",
				"src/text.js":                "export const words = (s) => s.split(/\\s+/).filter(Boolean)\n",
				"src/__tests__/text.test.js": "import { words } from '../text.js'\n\ntest('splits', () => { expect(words('a b')).toEqual(['a', 'b']) })\n",
				"docs/design.md":             design("40 - Feature: count words", "src/__tests__/count.test.js|Add", "src/count.js|Add"),
			},
			replies: []string{
				fenced("js", "import { countWords } from '../count.js'\n\ntest('counts', () => { expect(countWords('one two  three')).toBe(3) })\n"),
				fenced("js", "export const countWords = () => 0\n"),
				fenced("js", "import { words } from './text.js'\n\nexport const countWords = (s) => words(s).length\n"),
			},
			tests:   "baseline:pass red:broken red:fail green:pass",
			prompt:  `"type": "module"`,
			changed: "?? src/__tests__/count.test.js\n?? src/count.js\n",
		},
		{
			name: "a member crate of a workspace", tools: []string{"cargo"},
			files: map[string]string{
				"Cargo.toml":               manifest("app") + "\n[workspace]\nmembers = [\"crates/geo\"]\n",
				"src/lib.rs":               "pub fn name() -> &'static str { \"app\" }\n",
				"crates/geo/Cargo.toml":    manifest("geo-calc"),
				"crates/geo/src/lib.rs":    "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
				"crates/geo/tests/area.rs": "#[test]\nfn area_of_a_square() {\n    assert_eq!(geo_calc::area(2, 2), 4);\n}\n",
				"docs/design.md":           design("41 - Feature: perimeter", "crates/geo/tests/perimeter.rs|Add", "crates/geo/src/lib.rs|Modify"),
			},
			replies: []string{
				fenced("rust", "#[test]\nfn perimeter_of_a_rectangle() {\n    assert_eq!(geo_calc::perimeter(2, 3), 10);\n}\n"),
				fenced("rust", "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n\npub fn perimeter(_w: u32, _h: u32) -> u32 {\n    0\n}\n"),
				fenced("rust", "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n\npub fn perimeter(w: u32, h: u32) -> u32 {\n    2 * (w + h)\n}\n"),
			},
			tests:   "baseline:pass red:broken red:fail green:pass",
			prompt:  "workspace (members crates/geo)",
			changed: " M crates/geo/src/lib.rs\n?? crates/geo/tests/perimeter.rs\n",
		},
		{
			name: "jest through jest-junit", tools: []string{"node", "npm", "jest"}, installed: []string{"jest", "jest-junit"},
			args: []string{"--test-cmd", "JEST_JUNIT_OUTPUT_DIR=build jest --ci --reporters=default --reporters=jest-junit", "--report", "junit:build/junit.xml"},
			files: map[string]string{
				"package.json":          `{"name": "calc", "scripts": {"test": "jest"}}` + "\n",
				".gitignore":            "node_modules/\n",
				"lib/calc.js":           "exports.add = (a, b) => a + b\n",
				"__tests__/add.test.js": "const { add } = require('../lib/calc')\n\ntest('adds', () => { expect(add(1, 2)).toBe(3) })\n",
				"docs/design.md":        design("42 - Feature: subtract", "__tests__/sub.test.js|Add", "lib/sub.js|Add"),
			},
			replies: []string{
				fenced("js", "const { sub } = require('../lib/sub')\n\ntest('subtracts', () => { expect(sub(3, 2)).toBe(1) })\n"),
				fenced("js", "exports.sub = () => 0\n"),
				fenced("js", "exports.sub = (a, b) => a - b\n"),
			},
			tests:   "baseline:pass red:broken red:fail green:pass",
			prompt:  "__tests__",
			changed: "?? __tests__/sub.test.js\n?? lib/sub.js\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range tt.tools {
				testenv.RequireTool(t, tool)
			}
			repo := testenv.NewRepo(t, tt.files)
			for _, name := range tt.installed {
				if name == "jest-junit" {
					linkGlobalPackage(t, repo, name)
					continue
				}
				installGlobal(t, repo, name)
			}
			state := t.TempDir()
			args := append([]string{"implement", "--lld", "docs/design.md"}, tt.args...)
			res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, tt.replies...)), args...)
			if res.code != 3 {
				t.Fatalf("exit %d, want 3 (waiting at the diff review)\n%s", res.code, res.stderr)
			}
			r, _ := runOf(t, state)
			if results, _ := reported(t, state, repo, r.ID); results != tt.tests {
				t.Errorf("test results:\n got %s\nwant %s\n%s", results, tt.tests, res.stderr)
			}
			prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-scaffold.md"))
			if len(prompts) == 0 {
				t.Fatal("no scaffold prompt")
			}
			if text, _ := os.ReadFile(prompts[0]); !strings.Contains(string(text), tt.prompt) {
				t.Errorf("the scaffold prompt lacks %q", tt.prompt)
			}
			wt := filepath.Join(state, "worktrees", r.ID)
			if got := testenv.Git(t, wt, "status", "--porcelain"); got != tt.changed {
				t.Errorf("the change:\n%s\nwant\n%s", got, tt.changed)
			}
		})
	}
}

// linkGlobalPackage links a package installed globally with npm (one
// without a command of its own, as jest-junit) into the project's
// node_modules.
func linkGlobalPackage(t *testing.T, dir, name string) {
	t.Helper()
	npm := testenv.RequireTool(t, "npm")
	pkg := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(mustEvalSymlinks(t, npm)))), name)
	if _, err := os.Stat(filepath.Join(pkg, "package.json")); err != nil {
		msg := name + " is not installed (npm install -g " + name + ")"
		if os.Getenv("AZERO_REQUIRE_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pkg, filepath.Join(dir, "node_modules", name)); err != nil {
		t.Fatal(err)
	}
}

func mustEvalSymlinks(t *testing.T, p string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
