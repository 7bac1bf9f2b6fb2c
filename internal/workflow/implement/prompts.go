package implement

import (
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/coder"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testrun"
)

// systemText is the coder's standing instruction.
const systemText = `You are the coder in azero, a test-driven workflow under human governance.
You write exactly the one file you are asked for, in the format asked for.
azero runs the project's real test runner and decides from its exit code whether tests pass;
a human reviews every change before it is merged. Never claim that tests pass.`

// phase instructions appended to the per-file prompt.

func scaffoldText(s *State, path string, current []CurrentFile) string {
	where := "the design names"
	if len(current) > 0 {
		where = "exist in the current files of the change shown below, or that the design names"
	}
	lang := ""
	switch s.Runner {
	case testrun.KindPytest:
		lang = "For Python: import the module under test at the top of the file (import calc), and refer to what it does not have yet through it (calc.add), so that the file imports and each test fails on its own."
	case testrun.KindNode, testrun.KindVitest, testrun.KindJest:
		lang = "For JavaScript/TypeScript: import the module under test as a namespace (import * as calc from './calc.js', or const calc = require('./calc')) and call what it does not have yet through it (calc.add), so that the file loads and each test fails on its own."
	case testrun.KindCargo:
		lang = "For Rust: the test must compile. Use only functions and types that " + where + "; if they do not exist yet, azero will ask for compiling stubs next."
	case testrun.KindGo:
		lang = "For Go: the test file must compile. Use only functions and types that " + where + "; if they do not exist yet, azero will ask for compiling stubs next."
	}
	return fmt.Sprintf(`## Your task: the tests first (TDD red)

Write the test file %s for the design above. The tests must
- check the behaviour the design describes, with real assertions;
- FAIL now, because that behaviour is not implemented yet, and fail on their assertions,
  not on syntax or import errors;
- contain no implementation code.
%s
%s%s%s%s%s%s`, path, lang, againSection(s), writeFeedbackSection(s), runnerSection(s), filesSection(s, path), currentSection(current), contextSection(s))
}

// writeFeedbackSection gives the coder the human's request from a write
// review where they sent a whole-file replacement back.
func writeFeedbackSection(s *State) string {
	if s.WriteFeedback == "" {
		return ""
	}
	return fmt.Sprintf("\n## Sent back by the human\n\nYou wrote %s whole, replacing a file of more than %d lines; the human did not let it be written and asks:\n\n%s\n\nDo what it asks; keep what the task does not need to change as it is.\n",
		strings.Join(s.WriteFeedbackPaths, ", "), safewrite.ApprovalLines, fence(s.WriteFeedback))
}

// againSection tells the model, when it writes the tests again, why the
// last ones were not a valid red, with the end of the runner's output.
func againSection(s *State) string {
	if s.Red == nil || s.Red.Outcome == testrun.Fail {
		return ""
	}
	why := ""
	switch s.Red.Outcome {
	case testrun.Pass:
		why = "They passed before any code was written: they test nothing new. Write tests that fail now, on their assertions."
	case testrun.NoTests:
		why = "No test ran: the runner found no tests (a test that is skipped or only planned is not a test). Check the file name and the test functions against the runner's conventions below."
	case testrun.Broken:
		why = "They could not run (a syntax, import or build error), which is not a red. Fix that; the tests must load and fail on their assertions."
	default:
		why = "The test runner failed."
	}
	out := ""
	if s.TestOutput != "" {
		out = "\n" + fence(s.TestOutput) + "\n"
	}
	return fmt.Sprintf("\n## Why again: the last tests were not a valid red\n\n%s (%s)\n%s", why, s.Red.Summary, out)
}

// runnerSection tells the model how the project's tests run and where test
// files live.
func runnerSection(s *State) string {
	c := testrun.ProjectConventions(s.Worktree, s.Runner)
	if c == "" {
		return ""
	}
	return "\n## The test runner (" + s.Runner + ")\n\n" + c + "\n"
}

// stubText asks for compiling stubs; keep says the file exists (a Modify
// target), whose code must stay as it is: only the missing declarations
// are added (a reply that drops or changes existing code is refused).
func stubText(s *State, path, output string, current []CurrentFile, keep bool) string {
	what := fmt.Sprintf(`Write %s with the declarations the tests need (functions, types, methods, with the right
signatures) and bodies that do nothing useful: zero values, "raise NotImplementedError",
or panic("not implemented"). Do not implement the logic: the tests must run and fail on
their assertions.`, path)
	if keep {
		what = fmt.Sprintf(`%s exists, and its current content is shown above. Keep every existing declaration
and every existing body exactly as it is: change no line of it, remove nothing. Only ADD the
declarations the tests need that do not exist yet (functions, types, methods, with the right
signatures), with bodies that do nothing useful: zero values, "raise NotImplementedError",
or panic("not implemented"). Do not implement the new logic: the tests must run and fail on
their assertions. A reply that deletes or changes existing code is refused.`, path)
	}
	return fmt.Sprintf(`## Your task: compiling stubs

The tests do not build or import yet, because what they test does not exist:

%s

%s
%s%s%s%s%s`, fence(output), what, writeFeedbackSection(s), runnerSection(s), filesSection(s, path), currentSection(current), contextSection(s))
}

// reviseText asks whether and how a test file changes for the human's
// feedback at the review.
func reviseText(s *State, path string, current []CurrentFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, `## Your task: the human's feedback, for the test file %s

The human reviewed the whole change (its files are listed below) and sent it back with this request:

%s

Decide whether %s must change for it.
- If it must: write it in the output format above, changing only what the request needs. Keep
  every existing test unless the request asks to remove it: the tests are the referee's evidence,
  and a lost test is shown to the human. When the request asks for new behaviour, the new or
  changed tests must fail on the current code, on their assertions: azero runs them before any
  code changes.
- If it need not: answer with the line %s and no code.
Either way, say in a sentence or two what you changed and why, outside the code: azero shows it
to the human.
`, path, fence(s.Feedback), path, coder.NoChangeWord)
	if s.ReviseRounds > 1 && s.Red != nil && s.Red.Outcome != testrun.Fail && s.Red.Outcome != testrun.Pass {
		fmt.Fprintf(&b, "\n## Why again: the revised tests could not run\n\nThey must load and build, and fail (or pass) on their assertions (%s):\n\n%s\n", s.Red.Summary, fence(s.TestOutput))
	}
	b.WriteString(runnerSection(s))
	b.WriteString(filesSection(s, path))
	b.WriteString(currentSection(current))
	b.WriteString(contextSection(s))
	return b.String()
}

func implementText(s *State, path string, current []CurrentFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Your task: the implementation (TDD green)\n\nWrite %s so that the tests pass, as the design describes.\n", path)
	switch {
	case s.Revising:
		fmt.Fprintf(&b, "\nThe human reviewer read your change and sent it back with this request:\n\n%s\n\n"+
			"Decide whether %s must change for it (and for the tests, which must pass).\n"+
			"- If it must: write it in the output format above, changing only what the request and the tests need.\n"+
			"- If it need not: answer with the line %s and no code.\n"+
			"Either way, say in a sentence or two what you changed and why, outside the code: azero shows it to the human.\n",
			fence(s.Feedback), path, coder.NoChangeWord)
	case s.Feedback != "":
		fmt.Fprintf(&b, "\nThe human reviewer read your change and sent it back with this request; do what it asks while keeping the tests green:\n\n%s\n", fence(s.Feedback))
	}
	b.WriteString(writeFeedbackSection(s))
	if s.TestOutput != "" {
		why := ""
		if s.Green != nil && s.Green.Outcome != testrun.Pass {
			// The runner's own log may look fine (zero tests, a test
			// binary that stopped early): say what azero saw.
			why = " (" + s.Green.Summary + ")"
		}
		fmt.Fprintf(&b, "\nThe last test run failed%s:\n\n%s\n", why, fence(s.TestOutput))
	}
	if s.Lint != nil && !s.Lint.Passed {
		fmt.Fprintf(&b, "\nThe static checks reported:\n\n%s\n", fence(tail(s.Lint.Output, 40)))
	}
	b.WriteString(runnerSection(s))
	b.WriteString(filesSection(s, path))
	b.WriteString(currentSection(current))
	b.WriteString(contextSection(s))
	return b.String()
}

// CurrentFile is a file the change modifies, as it stands in the worktree,
// shown to the model so that it writes against the real code.
type CurrentFile struct {
	Path    string
	Content string // the whole file, or its outline when it is large
	Lines   int
	Bytes   int
	Outline bool // Content is an outline: the file is over the large-file threshold
}

// currentSection shows the other files the change modifies.
func currentSection(files []CurrentFile) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Current content of the other files this change modifies\n")
	for _, f := range files {
		if f.Outline {
			fmt.Fprintf(&b, "\n### %s (%d lines, %d bytes: too large to show whole; its declarations, in order)\n%s\n", f.Path, f.Lines, f.Bytes, fence(f.Content))
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n%s\n", f.Path, fence(f.Content))
	}
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
