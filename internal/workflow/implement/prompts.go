package implement

import (
	"fmt"
	"strings"
)

// systemText is the coder's standing instruction.
const systemText = `You are the coder in azero, a test-driven workflow under human governance.
You write exactly the one file you are asked for, in the format asked for.
azero runs the project's real test runner and decides from its exit code whether tests pass;
a human reviews every change before it is merged. Never claim that tests pass.`

// phase instructions appended to the per-file prompt.

func scaffoldText(s *State, path string) string {
	lang := "For Python: import the module under test at the top of the file (import calc), and refer to what it does not have yet through it (calc.add), so that the file imports and each test fails on its own."
	if s.Runner == "go" {
		lang = "For Go: the test file must compile. Use only functions and types that exist in the files shown, or that the design names; if they do not exist yet, azero will ask for compiling stubs next."
	}
	return fmt.Sprintf(`## Your task: the tests first (TDD red)

Write the test file %s for the design above. The tests must
- check the behaviour the design describes, with real assertions;
- FAIL now, because that behaviour is not implemented yet, and fail on their assertions,
  not on syntax or import errors;
- contain no implementation code.
%s
%s%s`, path, lang, filesSection(s, path), contextSection(s))
}

func stubText(s *State, path, output string) string {
	return fmt.Sprintf(`## Your task: compiling stubs

The tests do not build or import yet, because what they test does not exist:

%s

Write %s with the declarations the tests need (functions, types, methods, with the right
signatures) and bodies that do nothing useful: zero values, "raise NotImplementedError",
or panic("not implemented"). Do not implement the logic: the tests must run and fail on
their assertions.
%s%s`, fence(tail(output, 60)), path, filesSection(s, path), contextSection(s))
}

func implementText(s *State, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Your task: the implementation (TDD green)\n\nWrite %s so that the tests pass, as the design describes.\n", path)
	if s.TestOutput != "" {
		fmt.Fprintf(&b, "\nThe last test run failed:\n\n%s\n", fence(tail(s.TestOutput, 80)))
	}
	if s.Lint != nil && !s.Lint.Passed {
		fmt.Fprintf(&b, "\nThe static checks reported:\n\n%s\n", fence(tail(s.Lint.Output, 40)))
	}
	b.WriteString(filesSection(s, path))
	b.WriteString(contextSection(s))
	return b.String()
}

// filesSection lists the change's files so the model knows the whole plan.
func filesSection(s *State, current string) string {
	var b strings.Builder
	b.WriteString("\n## Files of this change\n\n")
	for _, f := range s.Files {
		mark := ""
		if f.Path == current {
			mark = "  <- this file"
		}
		fmt.Fprintf(&b, "- %s (%s)%s\n", f.Path, f.Change, mark)
	}
	return b.String()
}

func contextSection(s *State) string {
	if len(s.Context) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Context files (read only, for reference)\n")
	for _, c := range s.Context {
		fmt.Fprintf(&b, "\n### %s\n%s\n", c.Path, fence(c.Content))
	}
	return b.String()
}

// fence wraps text in a code fence longer than any fence inside it.
func fence(text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}

// tail keeps the last n lines of text: the end of a test log says most.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("... (%d lines omitted)\n%s", len(lines)-n, strings.Join(lines[len(lines)-n:], "\n"))
}
