package testrun_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

func TestCheckBaseline(t *testing.T) {
	t.Parallel()
	noPytest := func(name string) (string, error) {
		if name == "pytest" || strings.HasPrefix(name, "python") {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(name)
	}
	mod := "module example.com/calc\n\ngo 1.22\n"
	tests := []struct {
		name      string
		kind      string
		tool      string
		opts      testrun.Options
		files     map[string]string
		startable bool
		outcome   testrun.Outcome
		problem   string // a part of Problem
	}{
		{"passing suite", "pytest", "pytest", testrun.Options{},
			map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", "test_calc.py": "from calc import add\ndef test_add():\n    assert add(1, 2) == 3\n"},
			true, testrun.Pass, ""},
		{"failing tests can start", "pytest", "pytest", testrun.Options{},
			map[string]string{"test_calc.py": "def test_add():\n    assert 1 == 2\n"},
			true, testrun.Fail, ""},
		{"no tests yet", "go", "go", testrun.Options{}, map[string]string{"go.mod": mod, "calc.go": "package calc\n"},
			true, testrun.NoTests, ""},
		{"import error in an existing test", "pytest", "pytest", testrun.Options{},
			map[string]string{"test_calc.py": "import requests_not_installed\ndef test_a():\n    pass\n"},
			false, testrun.Broken, "E   ModuleNotFoundError: No module named 'requests_not_installed'"},
		{"existing code does not build", "go", "go", testrun.Options{},
			map[string]string{"go.mod": mod, "calc.go": "package calc\n\nfunc Add() int { return x }\n"},
			false, testrun.Broken, "./calc.go:3:25: undefined: x"},
		{"usage error", "pytest", "pytest", testrun.Options{TestCmd: "pytest --no-such-flag"},
			map[string]string{"test_calc.py": "def test_a():\n    pass\n"},
			false, testrun.Broken, "unrecognized arguments: --no-such-flag"},
		{"runner missing", "pytest", "", testrun.Options{LookPath: noPytest},
			map[string]string{"test_calc.py": "def test_a():\n    pass\n"},
			false, "", "the pytest runner cannot start: python not found"},
		{"test command missing", "junit", "", testrun.Options{TestCmd: "no-such-runner-azero", Report: "junit:out.xml"},
			map[string]string{}, false, testrun.Error, "no-such-runner-azero: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.tool != "" {
				testenv.RequireTool(t, tt.tool)
			}
			dir := testenv.NewRepo(t, tt.files)
			r, err := testrun.New(tt.kind, sandboxed(t, tt.opts))
			if err != nil {
				t.Fatal(err)
			}
			b, err := testrun.CheckBaseline(t.Context(), r, dir)
			if err != nil {
				t.Fatal(err)
			}
			if b.Startable != tt.startable || !strings.Contains(b.Problem, tt.problem) {
				t.Fatalf("startable %v problem %q, want %v and %q", b.Startable, b.Problem, tt.startable, tt.problem)
			}
			if tt.outcome != "" && (b.Result == nil || b.Result.Outcome != tt.outcome) {
				t.Fatalf("result %+v, want outcome %s", b.Result, tt.outcome)
			}
			if err := b.Err(); tt.startable != (err == nil) || (err != nil && !errors.Is(err, testrun.ErrBaseline)) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
}

func TestCheckBaselineCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, _ := testrun.New("pytest", sandboxed(t, testrun.Options{TestCmd: "sleep 30"}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := testrun.CheckBaseline(ctx, r, dir); err == nil {
		t.Fatal("a cancelled baseline returned no error")
	}
}
