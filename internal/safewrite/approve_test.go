package safewrite_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

func noEnv(string) string { return "" }

type writeResult struct {
	res safewrite.Result
	err error
}

// startWrite runs a Write with a terminal approver on a pseudo-terminal
// and returns the terminal to answer on.
func startWrite(t *testing.T, p project, req safewrite.Request, color bool) (*testenv.Terminal, <-chan writeResult) {
	t.Helper()
	term, io := newTerminal(t, color)
	w := &safewrite.Writer{Approver: safewrite.NewTerminalApprover(io, prompt.New(io, noEnv, exec.LookPath))}
	req.Root = p.root
	done := make(chan writeResult, 1)
	go func() {
		res, err := w.Write(t.Context(), req)
		done <- writeResult{res, err}
	}()
	return term, done
}

func wait(t *testing.T, done <-chan writeResult) writeResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(testenv.Patience):
		t.Fatal("Write did not return")
		return writeResult{}
	}
}

const menu = "[A]ppend / [I]nsert / [E]xtend / [R]eplace / [C]ancel? "

// Scenario 030 on a real terminal: a 150-line file is not replaced before
// the human saw the warning and the coloured diff, chose, saw the preview
// and typed approve.
func TestT030LargeFileApprovalOnTerminal(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("state.py"), numbered("old", 1, 150))
	term, done := startWrite(t, p, safewrite.Request{Path: "state.py", Content: []byte("new 1\nnew 2\n")}, true)
	term.WaitFor(t, menu, 1)
	screen := term.Text()
	for _, want := range []string{"WARNING", "state.py", "about to replace 150 lines with 2 lines", "150 lines would be deleted and 2 added"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the warning does not show %q:\n%s", want, screen)
		}
	}
	// Deletions red (31) and additions green (32), as ANSI colour codes.
	if !strings.Contains(screen, "31m-old 1") && !strings.Contains(screen, "31;") {
		t.Errorf("deletions are not red:\n%q", screen[:min(len(screen), 600)])
	}
	if !strings.Contains(screen, "32m+new 1") && !strings.Contains(screen, "32;") {
		t.Errorf("additions are not green:\n%q", screen[:min(len(screen), 600)])
	}
	select {
	case r := <-done:
		t.Fatalf("Write returned before the human answered: %+v, %v", r.res, r.err)
	default:
	}
	if got := readFile(t, p.path("state.py")); got != numbered("old", 1, 150) {
		t.Fatal("the file changed before approval")
	}
	term.Type(t, "r")
	term.WaitFor(t, "' to proceed or '", 1)
	if !strings.Contains(term.Text(), "Preview of") {
		t.Errorf("no preview before the confirmation:\n%s", term.Text())
	}
	term.Type(t, "approve")
	r := wait(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Approval != safewrite.ApprovalApproved || readFile(t, p.path("state.py")) != "new 1\nnew 2\n" {
		t.Fatalf("result %+v", r.res)
	}
}

// Scenario 160 on a real terminal: the human's selection becomes the
// decision, and each way out of the prompt does what it says.
func TestT160PromptLogicOnTerminal(t *testing.T) {
	t.Parallel()
	old := numbered("old", 1, 150)
	tests := []struct {
		name    string
		answers []string // typed one after another, each after the screen shows the matching prompt
		prompts []string
		want    string // the file afterwards
		wantErr error
		strat   safewrite.Strategy
	}{
		{"append", []string{"a", "approve"}, []string{menu, "Type 'approve'"}, old + "new\n", nil, safewrite.Append},
		{"insert asks for a line until it is in range", []string{"i", "999", "x", "50", "approve"},
			[]string{menu, "Insert at which line (1-151; 151 appends)?", "Please type a line number from 1 to 151:", "Please type a line number from 1 to 151:", "Type 'approve'"},
			numbered("old", 1, 49) + "new\n" + numbered("old", 50, 101), nil, safewrite.Insert},
		{"extend refused for the language, then cancel", []string{"e", "c"}, []string{menu, "Cannot extend"}, old, human.ErrAborted, ""},
		{"cancel", []string{"c"}, []string{menu}, old, human.ErrAborted, ""},
		{"reject after the preview", []string{"r", "reject"}, []string{menu, "Type 'approve'"}, old, human.ErrAborted, ""},
		{"word and junk", []string{"", "Append", "approve"}, []string{menu, "Please choose one of", "Type 'approve'"}, old + "new\n", nil, safewrite.Append},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("notes.txt"), old)
			term, done := startWrite(t, p, safewrite.Request{Path: "notes.txt", Content: []byte("new\n")}, false)
			seen := map[string]int{}
			for i, a := range tt.answers {
				seen[tt.prompts[i]]++
				term.WaitFor(t, tt.prompts[i], seen[tt.prompts[i]])
				term.Type(t, a)
			}
			r := wait(t, done)
			if tt.wantErr != nil {
				if !errors.Is(r.err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", r.err, tt.wantErr)
				}
			} else if r.err != nil {
				t.Fatal(r.err)
			} else if r.res.Strategy != tt.strat {
				t.Errorf("strategy = %s, want %s", r.res.Strategy, tt.strat)
			}
			if got := readFile(t, p.path("notes.txt")); got != tt.want {
				t.Fatalf("file afterwards ends %q", got[max(0, len(got)-40):])
			}
		})
	}
}

// The approver's own answer, without a Writer: the decision it returns.
func TestTerminalApproverDecision(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("big.txt"), numbered("old", 1, 120))
	prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "big.txt", Content: []byte("x\n")})
	if err != nil {
		t.Fatal(err)
	}
	term, io := newTerminal(t, false)
	a := safewrite.NewTerminalApprover(io, prompt.New(io, noEnv, exec.LookPath))
	got := make(chan safewrite.Decision, 1)
	go func() {
		d, err := a.Decide(context.Background(), prop)
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	term.WaitFor(t, menu, 1)
	term.Type(t, "I")
	term.WaitFor(t, "Insert at which line", 1)
	term.Type(t, "7")
	term.WaitFor(t, "Type 'approve'", 1)
	term.Type(t, "APPROVE")
	select {
	case d := <-got:
		if d != (safewrite.Decision{Approved: true, Strategy: safewrite.Insert, Line: 7, Channel: human.ChannelTerminal}) {
			t.Fatalf("decision = %+v", d)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("no decision")
	}
}

// Keys typed before the warning and the diff were shown never choose or
// approve: "R" and "approve" typed ahead are discarded, the human sees the
// menu and what they type then decides.
func TestTypedAheadApprovalIsDiscarded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		after []string // wait for the question, type the answer
		want  string
	}{
		{"cancel typed after the menu wins", []string{"C"}, numbered("old", 1, 150)},
		{"answers typed after the questions still work", []string{"R", "approve"}, "new\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("state.py"), numbered("old", 1, 150))
			term, io := newTerminal(t, false)
			term.Type(t, "R")
			term.Type(t, "approve")
			term.WaitFor(t, "approve\r\n", 1) // taken in by the terminal, nobody asked yet
			w := &safewrite.Writer{Approver: safewrite.NewTerminalApprover(io, prompt.New(io, noEnv, exec.LookPath))}
			done := make(chan writeResult, 1)
			go func() {
				res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "state.py", Content: []byte("new\n")})
				done <- writeResult{res, err}
			}()
			for i, answer := range tt.after {
				term.WaitFor(t, []string{menu, "Type 'approve'"}[i], 1)
				term.Type(t, answer)
			}
			r := wait(t, done)
			if got := readFile(t, p.path("state.py")); got != tt.want {
				t.Fatalf("state.py = %d bytes, want %d (err %v); screen:\n%s", len(got), len(tt.want), r.err, term.Text())
			}
			if tt.want == "new\n" && (r.err != nil || r.res.Approval != safewrite.ApprovalApproved) {
				t.Fatalf("approved write: %+v, %v", r.res, r.err)
			}
			if tt.want != "new\n" && !errors.Is(r.err, human.ErrAborted) {
				t.Fatalf("cancelled write: %v, want ErrAborted", r.err)
			}
		})
	}
}

// Every answer on a write is in the audit log with the channel it came
// from: an approval in its approval record, a refusal in its refusal.
func TestApprovalsAreAuditedWithTheirChannel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		decision safewrite.Decision
		event    string
		want     map[string]any
	}{
		{"approved", safewrite.Decision{Approved: true, Channel: human.ChannelTerminal}, "file_write_approval",
			map[string]any{"approval": "approved", "channel": "terminal", "path": "big.txt"}},
		{"approved with another strategy", safewrite.Decision{Approved: true, Strategy: safewrite.Append, Channel: "web"}, "file_write_approval",
			map[string]any{"approval": "approved", "channel": "web"}},
		{"rejected", safewrite.Decision{Approved: false, Channel: human.ChannelTerminal}, "file_write_refused",
			map[string]any{"refusal": "rejected", "channel": "terminal", "path": "big.txt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("big.txt"), numbered("old", 1, 120))
			log := newAuditLog()
			w := &safewrite.Writer{Audit: log.log, Approver: approverFunc(func(context.Context, safewrite.Proposal) (safewrite.Decision, error) {
				return tt.decision, nil
			})}
			_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.txt", Content: []byte("new\n"), Actor: "test"})
			if tt.decision.Approved != (err == nil) {
				t.Fatalf("Write: %v", err)
			}
			found := false
			for _, rec := range log.records(t) {
				if rec["event"] == tt.event {
					found = true
					checkRecord(t, rec, tt.want)
				}
			}
			if !found {
				t.Fatalf("no %s record: %v", tt.event, log.records(t))
			}
		})
	}
}
