package testrun

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// LintResult is what the static checks said.
type LintResult struct {
	Passed bool     `json:"passed"`
	Tools  []string `json:"tools"`
	Output string   `json:"output,omitempty"`
	// Notes say which checks were skipped and why (a tool not installed).
	Notes []string `json:"notes,omitempty"`
}

// lintStep is one command of the lint step, with the language whose
// build caches it uses.
type lintStep struct {
	argv []string
	lang string
}

// Lint runs the static checks for the runner kind over dir, each where its
// tool is installed (a missing tool is a note, not a failure):
//
//   - go: `go vet ./...`;
//   - pytest: `python -m py_compile` on the given Python files, then ruff, or
//     pyflakes, with the interpreter that runs the tests;
//   - node, vitest, jest: `tsc --noEmit` when the project has a tsconfig.json,
//     eslint when it has an eslint configuration, else `node --check` on the
//     given JavaScript files;
//   - cargo: `cargo clippy --all-targets`, else `cargo check --all-targets`;
//   - junit: the checks of the languages of the given files.
//
// files are relative to dir.
func Lint(ctx context.Context, dir, kind string, files []string, opts Options) (LintResult, error) {
	opts = opts.withDefaults()
	if !slices.Contains(Kinds(), kind) {
		return LintResult{}, fmt.Errorf("lint: unknown runner %q", kind)
	}
	if opts.Sandbox == nil {
		return LintResult{}, ErrNoSandbox
	}
	var langs []string
	if l := language(kind); l != "" {
		langs = []string{l}
	} else {
		for _, f := range files {
			if l := fileLanguage(f); l != "" && !slices.Contains(langs, l) {
				langs = append(langs, l)
			}
		}
	}
	res := LintResult{Passed: true}
	var steps []lintStep
	for _, lang := range langs {
		var s []lintStep
		var notes []string
		var err error
		switch lang {
		case "go":
			s, notes, err = goLint(opts)
		case "python":
			s, notes, err = pythonLint(ctx, dir, files, opts)
		case "js":
			s, notes = jsLint(dir, files, opts)
		case "rust":
			defer keepLockOut(dir)()
			s, notes, err = rustLint(dir, opts)
		}
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: %w", err)
		}
		steps = append(steps, s...)
		res.Notes = append(res.Notes, notes...)
	}
	if len(steps) == 0 {
		return res, nil
	}
	inv, err := opts.start(dir)
	if err != nil {
		return LintResult{}, fmt.Errorf("lint: %w", err)
	}
	defer inv.Close()
	var out strings.Builder
	for _, st := range steps {
		res.Tools = append(res.Tools, strings.Join(st.argv[:min(len(st.argv), 3)], " "))
		var text strings.Builder
		// Compiled bytecode must stay out of the worktree, or it would show
		// up as changes in the diff review.
		settings, err := inv.buildCaches(st.lang)
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: %w", err)
		}
		settings = append(settings, "PYTHONPYCACHEPREFIX="+filepath.Join(inv.jail.Tmp, "pycache"))
		x, err := execute(ctx, inv, st.argv, settings, opts.Timeout, &text, &text)
		if err != nil {
			return LintResult{}, fmt.Errorf("lint: %w", err)
		}
		if x.exitCode != 0 || x.timedOut {
			res.Passed = false
			fmt.Fprintf(&out, "$ %s\n%s", strings.Join(st.argv, " "), clip(text.String(), maxOutput/4))
			if x.timedOut {
				fmt.Fprintf(&out, "(timed out after %s)\n", opts.Timeout.Round(time.Second))
			}
		}
	}
	res.Output = out.String()
	return res, nil
}

func goLint(opts Options) ([]lintStep, []string, error) {
	goBin, err := opts.LookPath("go")
	if err != nil {
		// The tests ran some other way (a --test-cmd): nothing to check with.
		return nil, []string{"go is not installed: go vet did not run"}, nil
	}
	return []lintStep{{argv: []string{goBin, "vet", "./..."}, lang: "go"}}, nil, nil
}

func pythonLint(ctx context.Context, dir string, files []string, opts Options) ([]lintStep, []string, error) {
	py := withExt(files, ".py")
	if len(py) == 0 {
		return nil, nil, nil
	}
	interp, err := findPython(ctx, dir, opts)
	if err != nil {
		return nil, nil, err
	}
	steps := []lintStep{{argv: append([]string{interp.path, "-m", "py_compile"}, py...)}}
	switch {
	case found(opts.LookPath, "ruff"):
		steps = append(steps, lintStep{argv: append([]string{"ruff", "check", "--no-cache", "--quiet"}, py...)})
	case interp.pyflakes:
		steps = append(steps, lintStep{argv: append([]string{interp.path, "-m", "pyflakes"}, py...)})
	default:
		return steps, []string{fmt.Sprintf("neither ruff nor pyflakes (for %s) is installed: only syntax was checked", interp.path)}, nil
	}
	return steps, nil, nil
}

// jsTool finds a JavaScript tool in the project's node_modules/.bin, then
// on PATH.
func jsTool(dir, name string, opts Options) string {
	if p := filepath.Join(dir, "node_modules", ".bin", name); exists(p) {
		return p
	}
	if p, err := opts.LookPath(name); err == nil {
		return p
	}
	return ""
}

var eslintConfigs = []string{"eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
	".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"}

func jsLint(dir string, files []string, opts Options) ([]lintStep, []string) {
	var steps []lintStep
	var notes []string
	if exists(filepath.Join(dir, "tsconfig.json")) {
		if tsc := jsTool(dir, "tsc", opts); tsc != "" {
			steps = append(steps, lintStep{argv: []string{tsc, "--noEmit", "-p", "."}})
		} else {
			notes = append(notes, "tsc is not installed (npm install --save-dev typescript): types were not checked")
		}
	} else if len(withExt(files, ".ts", ".tsx", ".mts", ".cts")) > 0 {
		notes = append(notes, "the project has no tsconfig.json: TypeScript files were not type-checked")
	}
	code := withExt(files, ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts")
	hasConfig := slices.ContainsFunc(eslintConfigs, func(c string) bool { return exists(filepath.Join(dir, c)) })
	switch eslint := jsTool(dir, "eslint", opts); {
	case hasConfig && eslint != "" && len(code) > 0:
		steps = append(steps, lintStep{argv: append([]string{eslint}, code...)})
	case hasConfig && eslint == "":
		notes = append(notes, "eslint is not installed: the project's eslint configuration was not applied")
	}
	if len(steps) == 0 {
		// At least the syntax: node checks one file per process.
		if node, err := opts.LookPath("node"); err == nil {
			for _, f := range withExt(files, ".js", ".mjs", ".cjs") {
				steps = append(steps, lintStep{argv: []string{node, "--check", f}})
			}
		} else {
			notes = append(notes, "node is not installed: JavaScript was not checked")
		}
	}
	return steps, notes
}

func rustLint(dir string, opts Options) ([]lintStep, []string, error) {
	bin, err := cargoBin(opts)
	if err != nil {
		// The tests ran some other way (a --test-cmd): nothing to check with.
		return nil, []string{"cargo is not installed: Rust was not checked"}, nil
	}
	scope := cargoScope(dir)
	if found(opts.LookPath, "cargo-clippy") {
		return []lintStep{{argv: append([]string{bin, "clippy", "--all-targets", "--quiet"}, scope...), lang: "rust"}}, nil, nil
	}
	return []lintStep{{argv: append([]string{bin, "check", "--all-targets", "--quiet"}, scope...), lang: "rust"}},
		[]string{"clippy is not installed (rustup component add clippy): only `cargo check` ran"}, nil
}

func withExt(files []string, exts ...string) []string {
	var out []string
	for _, f := range files {
		if slices.Contains(exts, filepath.Ext(f)) {
			out = append(out, f)
		}
	}
	return out
}
