package testrun

import "testing"

// The runner of a package's test script, and the script `npm run SCRIPT --
// ARGS` gives the runner's arguments to.
func TestPackageTestRunner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		scripts        map[string]string
		runner, script string
	}{
		{"vitest", map[string]string{"test": "vitest"}, KindVitest, "test"},
		{"vitest run with flags", map[string]string{"test": "vitest run --coverage"}, KindVitest, "test"},
		{"jest after a build", map[string]string{"test": "tsc && NODE_ENV=test jest"}, KindJest, "test"},
		{"jest before another command", map[string]string{"test": "jest && echo done"}, KindJest, ""},
		{"node's runner", map[string]string{"test": "node --test test/"}, KindNode, "test"},
		{"node without --test", map[string]string{"test": "node test.js"}, "", ""},
		{"ESM jest through node", map[string]string{"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"}, KindJest, "test"},
		{"jest-cli through node", map[string]string{"test": "node node_modules/jest-cli/bin/jest.js --ci"}, KindJest, "test"},
		{"jest's bin through node", map[string]string{"test": "node ./node_modules/.bin/jest"}, KindJest, "test"},
		{"NODE_OPTIONS and npx", map[string]string{"test": "NODE_OPTIONS=--experimental-vm-modules npx jest"}, KindJest, "test"},
		{"cross-env", map[string]string{"test": "cross-env CI=1 vitest run"}, KindVitest, "test"},
		{"npx with its flags", map[string]string{"test": "npx --yes vitest run"}, KindVitest, "test"},
		{"pnpm exec", map[string]string{"test": "pnpm exec jest"}, KindJest, "test"},
		{"vitest's script through node", map[string]string{"test": "node node_modules/vitest/vitest.mjs run"}, KindVitest, "test"},
		{"npm run another script", map[string]string{"test": "npm run test:unit", "test:unit": "vitest run"}, KindVitest, "test:unit"},
		{"lint first, then the unit tests", map[string]string{"test": "npm run lint && npm run test:unit", "lint": "eslint .", "test:unit": "jest"}, KindJest, "test:unit"},
		{"yarn and pnpm script calls", map[string]string{"test": "yarn unit", "unit": "pnpm run spec", "spec": "jest"}, KindJest, "spec"},
		{"a script calling itself", map[string]string{"test": "npm test"}, "", ""},
		{"a loop of scripts", map[string]string{"test": "npm run a", "a": "npm run b", "b": "npm run a"}, "", ""},
		{"a missing script", map[string]string{"test": "npm run nothing"}, "", ""},
		{"npm's placeholder", map[string]string{"test": `echo "Error: no test specified" && exit 1`}, "", ""},
		{"a file named like jest", map[string]string{"test": "node jest.js"}, "", ""},
		{"node's runner under coverage", map[string]string{"test": "c8 --reporter=text node --test"}, KindNode, "test"},
		{"jest under nyc", map[string]string{"test": "nyc jest"}, KindJest, "test"},
		{"no scripts", nil, "", ""},
	}
	for _, tt := range tests {
		runner, script := packageJSON{Scripts: tt.scripts}.testRunner()
		if runner != tt.runner || script != tt.script {
			t.Errorf("%s: testRunner() = %q, %q; want %q, %q", tt.name, runner, script, tt.runner, tt.script)
		}
	}
}

// Any package.json's scripts: the runner found is one of the JavaScript
// runners, the script named is one the package has and runs it as its
// last command, and loops of scripts end.
func FuzzPackageTestRunner(f *testing.F) {
	f.Add("npm run a && jest", "npm run test", "node --experimental-vm-modules node_modules/jest/bin/jest.js")
	f.Add("yarn a", "pnpm run b", "npx --yes vitest run")
	f.Add("cross-env X=1 node --test", "", "")
	f.Fuzz(func(t *testing.T, test, a, b string) {
		p := packageJSON{Scripts: map[string]string{"test": test, "a": a, "b": b}}
		runner, script := p.testRunner()
		switch runner {
		case "":
			if script != "" {
				t.Fatalf("no runner but script %q", script)
			}
		case KindNode, KindVitest, KindJest:
		default:
			t.Fatalf("runner %q", runner)
		}
		if script == "" {
			return
		}
		body, ok := p.Scripts[script]
		if !ok {
			t.Fatalf("script %q is not the package's", script)
		}
		parts := scriptSep().Split(body, -1)
		if commandRunner(parts[len(parts)-1]) != runner {
			t.Fatalf("script %q = %q does not end in %s", script, body, runner)
		}
	})
}
