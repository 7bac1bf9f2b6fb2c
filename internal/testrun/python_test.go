package testrun_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// pythonWithPytest finds an interpreter that can import pytest.
func pythonWithPytest(t *testing.T) string {
	t.Helper()
	testenv.RequireTool(t, "pytest")
	for _, name := range []string{"/usr/bin/python3", "python3", "python"} {
		p, err := exec.LookPath(name)
		if err == nil && exec.Command(p, "-c", "import pytest").Run() == nil {
			return p
		}
	}
	t.Skip("pytest is installed but no python3 on PATH imports it")
	return ""
}

// Issue 11: the tests and the lint step run on one interpreter, even when
// the pytest script and the python3 on PATH belong to different ones (a
// pyenv shim without pytest first on PATH, pytest from /usr/bin).
func TestOneInterpreterForTestsAndLint(t *testing.T) {
	t.Parallel()
	real := pythonWithPytest(t)
	bin := t.TempDir()
	// python3 on PATH: an interpreter without site-packages, so without
	// pytest or pyflakes. pytest: a script run by the real interpreter.
	testenv.WriteFiles(t, bin, map[string]string{
		"python3": "#!/bin/sh\nexec " + real + " -S \"$@\"\n",
		"pytest":  "#!" + real + "\nimport sys, pytest\nsys.exit(pytest.console_main())\n",
	})
	for _, f := range []string{"python3", "pytest"} {
		if err := os.Chmod(filepath.Join(bin, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lookPath := func(name string) (string, error) {
		if p := filepath.Join(bin, name); name == "python3" || name == "pytest" {
			return p, nil
		}
		return "", exec.ErrNotFound // no ruff, no pyflakes script: the interpreter's own pyflakes
	}
	files := map[string]string{"calc.py": "import os\n\ndef add(a, b):\n    return a + b\n",
		"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
	// checkout is where a worktree was made from: git left its ignored
	// .venv out of the worktree.
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, ".venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(checkout, ".venv", "bin", "python")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		venv     bool
		checkout string
		want     func(dir string) string
	}{
		{"the interpreter that has pytest", false, "", func(string) string { return real }},
		{"the project's virtual environment first", true, "", func(dir string) string { return filepath.Join(dir, ".venv", "bin", "python") }},
		{"the checkout's virtual environment in a worktree", false, checkout, func(string) string { return filepath.Join(checkout, ".venv", "bin", "python") }},
		{"the worktree's own virtual environment before the checkout's", true, checkout, func(dir string) string { return filepath.Join(dir, ".venv", "bin", "python") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, files)
			if tt.venv {
				if err := os.MkdirAll(filepath.Join(dir, ".venv", "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(real, filepath.Join(dir, ".venv", "bin", "python")); err != nil {
					t.Fatal(err)
				}
			}
			want := tt.want(dir)
			opts := testrun.Options{LookPath: lookPath, Checkout: tt.checkout}
			r, _ := testrun.New("pytest", sandboxed(t, opts))
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != testrun.Pass || res.Command[0] != want {
				t.Fatalf("outcome %s command %q, want pass with %s\n%s", res.Outcome, res.Command, want, res.Output)
			}
			lint, err := testrun.Lint(t.Context(), dir, "pytest", []string{"calc.py", "test_calc.py"}, sandboxed(t, opts))
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range lint.Tools {
				if !strings.HasPrefix(tool, want+" -m ") {
					t.Errorf("lint ran %q, not with %s", tool, want)
				}
			}
			hasPyflakes := exec.Command(real, "-c", "import pyflakes").Run() == nil
			if hasPyflakes && (lint.Passed || !strings.Contains(lint.Output, "'os' imported but unused")) {
				t.Errorf("pyflakes of %s did not run: %+v", want, lint)
			}
			if !hasPyflakes && len(lint.Notes) == 0 {
				t.Errorf("no note that pyflakes is missing: %+v", lint)
			}
		})
	}
}
