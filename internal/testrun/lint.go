package testrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// LintResult is what the static checks said.
type LintResult struct {
	Passed bool     `json:"passed"`
	Tools  []string `json:"tools"`
	Output string   `json:"output,omitempty"`
}

// Lint runs the static checks for the runner kind over dir: `go vet ./...`
// for go; for pytest, `python3 -m py_compile` on the given Python files,
// then ruff or pyflakes when one is installed. files are relative to dir.
func Lint(ctx context.Context, dir, kind string, files []string, opts Options) (LintResult, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	var steps [][]string
	env := cleanEnv(opts.Environ)
	switch kind {
	case "go":
		goBin, err := opts.LookPath("go")
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: %w", err)
		}
		steps = append(steps, []string{goBin, "vet", "./..."})
	case "pytest":
		var py []string
		for _, f := range files {
			if strings.HasSuffix(f, ".py") {
				py = append(py, f)
			}
		}
		if len(py) == 0 {
			return LintResult{Passed: true}, nil
		}
		python, err := opts.LookPath("python3")
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: python3 not found: %w", err)
		}
		// Keep compiled bytecode out of the worktree, or it would show up
		// as changes in the diff review.
		cache, err := os.MkdirTemp("", "azero-pycache-")
		if err != nil {
			return LintResult{}, err
		}
		defer os.RemoveAll(cache)
		env = append(env, "PYTHONPYCACHEPREFIX="+cache)
		steps = append(steps, append([]string{python, "-m", "py_compile"}, py...))
		switch {
		case found(opts.LookPath, "ruff"):
			steps = append(steps, append([]string{"ruff", "check", "--no-cache", "--quiet"}, py...))
		case found(opts.LookPath, "pyflakes"):
			steps = append(steps, append([]string{"pyflakes"}, py...))
		case found(opts.LookPath, "pyflakes3"):
			steps = append(steps, append([]string{"pyflakes3"}, py...))
		}
	default:
		return LintResult{}, fmt.Errorf("lint: unknown runner %q", kind)
	}
	res := LintResult{Passed: true}
	var out strings.Builder
	for _, argv := range steps {
		res.Tools = append(res.Tools, strings.Join(argv[:min(len(argv), 3)], " "))
		x, err := execute(ctx, dir, argv, env, opts.Timeout)
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: %w", err)
		}
		if x.exitCode != 0 || x.timedOut {
			res.Passed = false
			fmt.Fprintf(&out, "$ %s\n%s%s", strings.Join(argv, " "), x.stdout, x.stderr)
			if x.timedOut {
				fmt.Fprintf(&out, "(timed out after %s)\n", opts.Timeout.Round(time.Second))
			}
		}
	}
	res.Output = out.String()
	return res, nil
}

func found(lookPath func(string) (string, error), name string) bool {
	_, err := lookPath(name)
	return err == nil
}
