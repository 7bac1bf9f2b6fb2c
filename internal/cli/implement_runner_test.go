package cli

import (
	"encoding/json"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// The runner a run uses: --runner, else [implement] runner in the
// repository's config, else the one the design's test files and the
// project call for; a command and its report come from the flags or the
// config alike. The run records its choice before the first model call
// (the scripted coder has no reply for the second, so the run stops there).
func TestImplementChoosesTheRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "node")
	nodeDesign := design("3 - Feature: double", "calc.test.js|Add", "calc.js|Modify")
	tests := []struct {
		name    string
		files   map[string]string
		args    []string
		runner  string
		testCmd string
		report  string
	}{
		{"config over detection", map[string]string{
			"package.json": `{"name": "x", "devDependencies": {"vitest": "^4"}}`, ".azero/config.toml": "[implement]\nrunner = \"node\"\n"},
			nil, "node", "", ""},
		{"flag over config", map[string]string{
			"package.json": `{"name": "x", "scripts": {"test": "jest"}}`, ".azero/config.toml": "[implement]\nrunner = \"jest\"\n"},
			[]string{"--runner", "node"}, "node", "", ""},
		{"JavaScript tests in a Go module with a package.json", map[string]string{
			"package.json": `{"name": "x", "scripts": {"test": "node --test"}}`, "go.mod": "module x\n\ngo 1.22\n"},
			nil, "node", "", ""},
		{"command and report from the config", map[string]string{
			"package.json": `{"name": "x"}`, ".azero/config.toml": "[implement]\ntest_cmd = \"node --test --test-reporter=junit --test-reporter-destination=out.xml\"\nreport = \"junit:out.xml\"\n"},
			nil, "node", "node --test --test-reporter=junit --test-reporter-destination=out.xml", "junit:out.xml"},
		{"command and report from the flags", map[string]string{
			"package.json": `{"name": "x"}`, ".azero/config.toml": "[implement]\ntest_cmd = \"false\"\nreport = \"junit:nowhere.xml\"\n"},
			[]string{"--runner", "junit", "--test-cmd", "node --test --test-reporter=junit --test-reporter-destination=t.xml", "--report", "junit:t.xml"},
			"junit", "node --test --test-reporter=junit --test-reporter-destination=t.xml", "junit:t.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"calc.js": "export const add = (a, b) => a + b\n", "docs/design.md": nodeDesign}
			for k, v := range tt.files {
				files[k] = v
			}
			repo := testenv.NewRepo(t, files)
			state := t.TempDir()
			script := coderScript(t, fenced("js", "import { test } from 'node:test'\n"))
			args := append([]string{"implement", "--lld", "docs/design.md"}, tt.args...)
			res := runAzeroIn(t, state, repo, implementEnv(state, script), args...)
			r, _ := runOf(t, state)
			var s struct {
				Runner  string `json:"runner"`
				TestCmd string `json:"test_cmd"`
				Report  string `json:"report"`
			}
			if err := json.Unmarshal(r.State, &s); err != nil {
				t.Fatal(err)
			}
			if s.Runner != tt.runner || s.TestCmd != tt.testCmd || s.Report != tt.report {
				t.Errorf("runner %q test_cmd %q report %q, want %q %q %q\n%s", s.Runner, s.TestCmd, s.Report, tt.runner, tt.testCmd, tt.report, res.stderr)
			}
		})
	}
}
