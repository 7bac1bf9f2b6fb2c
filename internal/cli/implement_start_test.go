package cli

// Getting started with your own project: the scripted model as the README
// documents it, the baseline run before any model call, the human's
// revise answer, and a loose match the coder must correct.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/llm/mock"
	"github.com/azero-dev/azero/internal/testenv"
)

// readmeSection returns the README's section under heading, up to the
// next "## " heading outside a code block.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	lines := strings.Split(rest, "\n")
	fence := 0
	for i, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, "`"))
		switch {
		case fence == 0 && n >= 3:
			fence = n
		case fence > 0 && n >= fence && strings.TrimSpace(l[n:]) == "":
			fence = 0
		case fence == 0 && strings.HasPrefix(l, "## "):
			return strings.Join(lines[:i], "\n")
		}
	}
	return rest
}

// fencedBlocks returns the top-level code blocks of text in order, with
// their info strings, as CommonMark reads them: a fence is closed only by
// a fence of the same character at least as long, with no info string.
func fencedBlocks(text string) (infos, bodies []string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		open := len(lines[i]) - len(strings.TrimLeft(lines[i], "`"))
		if open < 3 {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			l := lines[j]
			if n := len(l) - len(strings.TrimLeft(l, "`")); n >= open && strings.TrimSpace(l[n:]) == "" {
				break
			}
			body = append(body, l)
		}
		infos = append(infos, strings.TrimSpace(lines[i][open:]))
		bodies = append(bodies, strings.Join(body, "\n")+"\n")
		i = j
	}
	return infos, bodies
}

// TestScriptedModelAsDocumented runs the README's "Trying azero without a
// model" exactly as written: its calc.py, its design and its script, with
// its command; and checks that every optional key and value the README and
// `implement --help` name is one the scripted model takes.
func TestScriptedModelAsDocumented(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	section := readmeSection(t, "## Trying azero without a model")
	infos, bodies := fencedBlocks(section)
	if strings.Join(infos, " ") != "python markdown toml sh" {
		t.Fatalf("the section's code blocks are %q, want python, markdown, toml, sh (a fence closed early?)", infos)
	}
	if _, err := mock.ParseScript("README", []byte(bodies[2])); err != nil {
		t.Fatalf("the README's script: %v", err)
	}
	repo, state := testenv.NewRepo(t, map[string]string{"calc.py": bodies[0], "docs/design.md": bodies[1]}), t.TempDir()
	script := filepath.Join(t.TempDir(), "replies.toml")
	if err := os.WriteFile(script, []byte(bodies[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := strings.Fields(strings.TrimSpace(bodies[3]))
	if len(cmd) < 3 || cmd[0] != "AZERO_MOCK_LLM=1" || cmd[1] != "AZERO_MOCK_SCRIPT=replies.toml" || cmd[2] != "azero" {
		t.Fatalf("the README's command is %q", bodies[3])
	}
	res := runAzeroIn(t, state, repo, []string{"AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT=" + script}, cmd[3:]...)
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3 at the review\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "nothing leaves this machine") || !strings.Contains(res.stderr, "the files the change modifies, whole: calc.py") {
		t.Errorf("the data policy does not say what the scripted model is shown:\n%s", res.stderr)
	}
	_, hist := runOf(t, state)
	// calc.py more than doubles: the diff review waits for a human.
	if got := testenv.NodePath(hist); got != "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:waiting" {
		t.Errorf("the README's example took the path %s", got)
	}

	// Every stop and error value the documentation names is one a script takes.
	help := runAzeroIn(t, state, repo, nil, "implement", "--help")
	docs := section + help.stdout
	values := regexp.MustCompile(`\b(stop|error) = "([a-z_]+)"`).FindAllStringSubmatch(docs, -1)
	if len(values) < 2 {
		t.Fatalf("the documentation names no stop or error value:\n%s", docs)
	}
	for _, v := range values {
		reply := fmt.Sprintf("[[reply]]\nrole = \"coder\"\nturn = 1\n%s = %q\n", v[1], v[2])
		if _, err := mock.ParseScript("doc", []byte(reply)); err != nil {
			t.Errorf("the documented %s = %q is refused: %v", v[1], v[2], err)
		}
	}
	for _, want := range []string{"turn = N", "compiling stubs", "the next turn", "AZERO_MOCK_SCRIPT=FILE", `[mock] script = "FILE"`} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("implement --help does not say %q", want)
		}
	}
}

// TestImplementReviseAfterARejectedDiff: the diff review's reject goes to
// the human review, which offers revise; the typed feedback reaches the
// coder, the audit log and the lineage, and the revised change is
// reviewed again before it merges.
func TestImplementReviseAfterARejectedDiff(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	const feedback = "give multiply a docstring"
	revised := "```python\n\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    \"\"\"Return the product of a and b.\"\"\"\n    return a * b\n```\n"
	repo, state := calcRepo(t), t.TempDir()
	// At the revision every file is asked: the tests need no change.
	noChange := "NO CHANGE\n\nThe request is about the code; the tests already check multiply.\n"
	env := azeroEnv(state, implementEnv(state, coderScript(t, goodTests, goodCalc, noChange, revised))...)
	screen := startOnTerminal(t, repo, env, os.Args[0], "implement", "--lld", "docs/design.md")
	screen.WaitFor(t, "Nothing is committed unless you type approve", 1)
	screen.Type(t, "reject")
	screen.WaitFor(t, "Send it back to the coder, or abort?", 1)
	if _, after, _ := strings.Cut(screen.Text(), "Send it back to the coder, or abort?"); strings.Contains(after, "to merge it") {
		t.Errorf("a rejected diff was offered approve:\n%s", after)
	}
	screen.Type(t, "revise")
	screen.WaitFor(t, "What should the coder change?", 1)
	screen.Type(t, feedback)
	screen.Type(t, "") // the feedback ends with an empty line
	screen.WaitFor(t, "Nothing is committed unless you type approve", 2)
	if !strings.Contains(screen.Text(), `+    """Return the product of a and b."""`) {
		t.Errorf("the revised change was not shown at the second diff review")
	}
	if !strings.Contains(screen.Text(), "test_calc.py: no change; the coder says:") || !strings.Contains(screen.Text(), "the tests already check multiply") {
		t.Errorf("the coder's answer about the tests was not shown")
	}
	screen.Type(t, "approve")
	screen.WaitFor(t, "to merge it", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	if calc, _ := os.ReadFile(filepath.Join(repo, "calc.py")); !strings.Contains(string(calc), "Return the product") {
		t.Errorf("the revised change was not merged: %q", calc)
	}
	r, _ := runOf(t, state)
	prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-implement.md"))
	if len(prompts) != 2 {
		t.Fatalf("implement prompts: %v", prompts)
	}
	if p, _ := os.ReadFile(prompts[1]); !strings.Contains(string(p), feedback) || !strings.Contains(string(p), "sent it back") {
		t.Errorf("the second implementation prompt does not carry the feedback:\n%s", p)
	}
	recs, _ := audit.Read(filepath.Join(state, audit.FileName))
	var decisions []string
	for _, rec := range recs {
		if rec["event"] == "gate_decision" {
			d := fmt.Sprint(rec["gate"], ":", rec["decision"])
			if rec["text"] != nil {
				d += fmt.Sprintf("(%v)", rec["text"])
			}
			decisions = append(decisions, d)
		}
	}
	want := "diff_review:REJECTED,human_review:REVISE(" + feedback + "),diff_review:APPROVED,human_review:APPROVED"
	if got := strings.Join(decisions, ","); got != want {
		t.Errorf("gate decisions:\n got %s\nwant %s", got, want)
	}
}

// TestImplementRefusesAnUnevenLooseMatch: a FIND that matches the large
// file only with its whitespace ignored, one line indented differently
// from the others, is refused with the file's exact lines to copy; the
// coder's corrected blocks are applied, and the file's other code is
// never re-indented by that slip.
func TestImplementRefusesAnUnevenLooseMatch(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	var big strings.Builder
	big.WriteString("\"\"\"Many helpers.\"\"\"\n\n\nclass Helpers:\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&big, "    def f%d(self):\n        return %d\n\n", i, i)
	}
	original := big.String()
	design := "# 9 - Feature: multiply in a big module\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
		"| `test_big.py` | Add | tests |\n| `big.py` | Modify | add Helpers.multiply after f200 |\n"
	repo := testenv.NewRepo(t, map[string]string{"big.py": original, "docs/design.md": design})
	state := t.TempDir()
	tests := "```python\nimport big\n\n\ndef test_multiply():\n    assert big.Helpers().multiply(3, 4) == 12\n```\n"
	// FIND's first line is indented 4 less than the file, its second 8 less.
	uneven := "<<<<<<< SEARCH\ndef f200(self):\nreturn 200\n=======\ndef f200(self):\n    return 200\n\ndef multiply(self, a, b):\n    return a * b\n>>>>>>> REPLACE\n"
	exact := "<<<<<<< SEARCH\n    def f200(self):\n        return 200\n=======\n    def f200(self):\n        return 200\n\n    def multiply(self, a, b):\n        return a * b\n>>>>>>> REPLACE\n"
	res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, tests, uneven, exact)), "implement", "--lld", "docs/design.md")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	r, _ := runOf(t, state)
	got, _ := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "big.py"))
	if want := strings.Replace(original, "        return 200\n", "        return 200\n\n    def multiply(self, a, b):\n        return a * b\n", 1); string(got) != want {
		t.Errorf("big.py was not edited exactly as the corrected block says")
	}
	prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-implement.md"))
	if len(prompts) != 2 {
		t.Fatalf("implement prompts: %v, want the first and the correction", prompts)
	}
	p, _ := os.ReadFile(prompts[1])
	for _, want := range []string{"is not one uniform shift", "indented differently", "```\n    def f200(self):\n        return 200\n```"} {
		if !strings.Contains(string(p), want) {
			t.Errorf("the correction sent to the coder lacks %q:\n%s", want, p)
		}
	}
	recs, _ := audit.Read(filepath.Join(state, audit.FileName))
	rejected := 0
	for _, rec := range recs {
		if rec["event"] == "edit_rejected" && strings.Contains(fmt.Sprint(rec["error"]), "uniform shift") {
			rejected++
		}
	}
	if rejected != 1 {
		t.Errorf("%d edit_rejected records for the uneven block, want 1", rejected)
	}
	// The human sees the refusal too, as it happened: the terminal, the
	// web page and runs show --events replay the same warning.
	_, events := shown(t, state, repo, r.ID)
	warned := false
	for _, ev := range events {
		if ev.Kind == event.Warning && strings.Contains(ev.Text, "big.py: the coder's reply was refused (the code)") && strings.Contains(ev.Text, "uniform shift") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning event for the refused reply among %d events", len(events))
	}
	if !strings.Contains(res.stderr, "big.py: the coder's reply was refused") {
		t.Errorf("the terminal does not show the refused reply:\n%s", res.stderr)
	}
}
