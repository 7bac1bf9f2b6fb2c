package implement

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/mock"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// helpers is a Python module of 1+4n lines.
func helpers(n int) string {
	var b strings.Builder
	b.WriteString("\"\"\"Many helpers.\"\"\"\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n\ndef f%d():\n    return %d\n", i, i)
	}
	return b.String()
}

// gutted is what a coder returns when it rewrites the 149-line helpers.py
// whole and keeps only one of its functions (9 lines).
const gutted = "\"\"\"Many helpers.\"\"\"\n\n\ndef f1():\n    return 1\n\n\ndef multiply(a, b):\n    return a * b\n"

func fenced(content string) string { return "```python\n" + content + "```\n" }

// recording is the scripted coder with the prompts it was sent kept.
type recording struct {
	llm.Model
	mu      sync.Mutex
	prompts []string
}

func (r *recording) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	r.mu.Lock()
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Text)
	}
	r.prompts = append(r.prompts, b.String())
	r.mu.Unlock()
	return r.Model.Generate(ctx, req)
}

// scripted returns the offline scripted coder answering replies in turn.
func scripted(t *testing.T, replies ...string) *recording {
	t.Helper()
	p := testenv.WriteScript(t, testenv.ModelScript("coder", replies...))
	m, err := mock.New(mock.Options{Script: p, Role: llm.RoleCoder})
	if err != nil {
		t.Fatal(err)
	}
	return &recording{Model: m}
}

// writeRun is a repository whose helpers.py has 149 lines and whose
// small.py has 2, both modified by the change, with an audit log.
type writeRun struct {
	repo, log string
	s         State
	coder     *recording
	w         *safewrite.Writer
}

func newWriteRun(t *testing.T, w safewrite.Writer, replies ...string) *writeRun {
	t.Helper()
	repo := testenv.NewRepo(t, map[string]string{"helpers.py": helpers(37), "small.py": "def g():\n    return 0\n",
		"test_helpers.py": "import helpers\n\n\ndef test_multiply():\n    assert helpers.multiply(3, 4) == 12\n"})
	r := &writeRun{repo: repo, log: filepath.Join(t.TempDir(), "audit.jsonl"), coder: scripted(t, replies...)}
	logger, err := audit.Open(r.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logger.Close() })
	w.Audit = logger
	r.w = &w
	r.s = State{Repo: repo, Worktree: repo, Branch: "azero/x", BaseBranch: "main", Runner: testrun.KindPytest,
		Files:     []FileSpec{{Path: "test_helpers.py", Change: "Modify", Test: true}, {Path: "helpers.py", Change: "Modify"}, {Path: "small.py", Change: "Modify"}},
		Scaffolds: 1}
	return r
}

func (r *writeRun) graph() *flow.Graph[State] {
	return Graph(Deps{Coder: r.coder, Writer: r.w})
}

// run runs one node of the graph as the engine would.
func (r *writeRun) run(t *testing.T, node string) (string, error) {
	t.Helper()
	st, ok := r.graph().Step(node)
	if !ok || st.Run == nil {
		t.Fatalf("%s is not a node", node)
	}
	return st.Run(flow.WithRun(t.Context(), "run-1", node), &r.s)
}

func (r *writeRun) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.repo, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (r *writeRun) records(t *testing.T, event string) []audit.Record {
	t.Helper()
	return testenv.AuditLogEvents(t, r.log, event)
}

// A whole file replacing a file over 100 lines is not written in the
// round: it waits for the write review, which shows safewrite's warning
// and the diff, binds its question to the exact content, and on approve
// writes exactly that, audited as approved on the channel that answered.
func TestLargeReplacementWaitsForTheWriteReview(t *testing.T) {
	t.Parallel()
	r := newWriteRun(t, safewrite.Writer{}, fenced(gutted), fenced("def g():\n    return 1\n"))
	original := r.read(t, "helpers.py")
	next, err := r.run(t, NodeImplement)
	if err != nil || next != NodeWriteReview {
		t.Fatalf("implement: next %q, %v; want the write review", next, err)
	}
	if r.read(t, "helpers.py") != original {
		t.Fatal("helpers.py was replaced before anyone approved")
	}
	if got := r.read(t, "small.py"); got != "def g():\n    return 1\n" {
		t.Errorf("the round did not carry on with the other files: small.py = %q", got)
	}
	if len(r.s.PendingWrites) != 1 {
		t.Fatalf("pending writes %+v", r.s.PendingWrites)
	}
	pw := r.s.PendingWrites[0]
	if pw.Path != "helpers.py" || pw.Purpose != PurposeImplement || pw.Content != gutted || pw.OldSHA256 != sha256Hex([]byte(original)) ||
		pw.NewSHA256 != sha256Hex([]byte(gutted)) || pw.OldLines != 149 || pw.NewLines != 9 || pw.Strategy != string(safewrite.Replace) {
		t.Errorf("pending write %+v", pw)
	}

	g := r.graph()
	q, err := g.Ask(t.Context(), NodeWriteReview, &r.s)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"!! WARNING: helpers.py: about to replace 149 lines with 9 lines: 142 lines would be deleted and 2 added",
		"--- a/helpers.py", "+++ b/helpers.py", "-def f37():", "+def multiply(a, b):"} {
		if !strings.Contains(q.Report, want) {
			t.Errorf("the report lacks %q:\n%s", want, q.Report)
		}
	}
	if !strings.Contains(q.Title, "more than 100 lines") || !strings.Contains(q.Title, "helpers.py") {
		t.Errorf("title %q", q.Title)
	}
	if q.Kind != human.Word || !slices.Equal(q.Keys(), []string{AnswerApprove, AnswerRevise, AnswerAbort}) || q.Unattended != nil {
		t.Errorf("answers %v (unattended %v), want approve, revise or abort, typed", q.Keys(), q.Unattended)
	}
	facts := fmt.Sprint(q.Facts)
	if !strings.Contains(facts, pw.OldSHA256) || !strings.Contains(facts, pw.NewSHA256) {
		t.Errorf("the question's facts do not bind the content: %s", facts)
	}

	if r.records(t, safewrite.EventApproval) != nil {
		t.Fatal("an approval was recorded before the human answered")
	}
	next, err = g.Decide(NodeWriteReview, &r.s, q, human.Answer{Gate: NodeWriteReview, Key: AnswerApprove, Channel: human.ChannelWeb})
	if err != nil || next != NodeApplyWrites {
		t.Fatalf("approve: %q, %v", next, err)
	}
	if next, err = r.run(t, NodeApplyWrites); err != nil || next != NodeGreen {
		t.Fatalf("apply: %q, %v", next, err)
	}
	if r.read(t, "helpers.py") != gutted {
		t.Error("the approved content was not written")
	}
	if len(r.s.PendingWrites) != 0 || r.s.WritesChannel != "" {
		t.Errorf("the approved writes are still pending: %+v", r.s)
	}
	approvals := r.records(t, safewrite.EventApproval)
	if len(approvals) != 1 || approvals[0]["path"] != "helpers.py" || approvals[0]["approval"] != string(safewrite.ApprovalApproved) ||
		approvals[0]["channel"] != human.ChannelWeb || approvals[0]["run_id"] != "run-1" {
		t.Errorf("file_write_approval records %v", approvals)
	}
	// Applying again (a crash after the write) writes nothing more.
	r.s.PendingWrites, r.s.WritesChannel = []PendingWrite{pw}, human.ChannelWeb
	if next, err = r.run(t, NodeApplyWrites); err != nil || next != NodeGreen || r.read(t, "helpers.py") != gutted {
		t.Errorf("apply repeated: %q, %v", next, err)
	}
	if n := len(r.records(t, safewrite.EventApproval)); n != 1 {
		t.Errorf("a repeated apply recorded %d approvals", n)
	}
}

// An approval binds to the content the human saw: a file changed after
// the question is refused as stale (nothing written) and the round is done
// again; the question asked then is another one.
func TestApprovedWriteOfAChangedFileIsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, gate, apply, again string
		purpose                  string
	}{
		{"implement", NodeWriteReview, NodeApplyWrites, NodeImplement, PurposeImplement},
		{"stubs", NodeScaffoldWriteReview, NodeScaffoldApplyWrites, NodeScaffold, PurposeStub},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newWriteRun(t, safewrite.Writer{})
			original := r.read(t, "helpers.py")
			r.s.PendingWrites = []PendingWrite{{Path: "helpers.py", Purpose: tt.purpose, Content: gutted, Strategy: string(safewrite.Replace),
				OldSHA256: sha256Hex([]byte(original)), NewSHA256: sha256Hex([]byte(gutted)), OldLines: 149, NewLines: 9}}
			g := r.graph()
			q, err := g.Ask(t.Context(), tt.gate, &r.s)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(q.Report, "changed since") {
				t.Errorf("a file as read is reported changed:\n%s", q.Report)
			}
			edited := original + "\n\ndef mine():\n    return 'mine'\n"
			testenv.WriteFiles(t, r.repo, map[string]string{"helpers.py": edited})
			again, err := g.Ask(t.Context(), tt.gate, &r.s)
			if err != nil {
				t.Fatal(err)
			}
			if human.Fingerprint(again) == human.Fingerprint(q) || !strings.Contains(again.Report, "helpers.py changed since the coder read it") {
				t.Errorf("the question does not change with the file:\n%s", again.Report)
			}
			// The answer given to the first question is taken after the change.
			next, err := g.Decide(tt.gate, &r.s, q, human.Answer{Gate: tt.gate, Key: AnswerApprove, Channel: human.ChannelTerminal})
			if err != nil || next != tt.apply {
				t.Fatalf("approve: %q, %v", next, err)
			}
			next, err = r.run(t, tt.apply)
			if err != nil || next != tt.again {
				t.Fatalf("apply over a changed file: %q, %v; want %s again", next, err, tt.again)
			}
			if r.read(t, "helpers.py") != edited {
				t.Fatal("the changed file was overwritten")
			}
			refused := r.records(t, safewrite.EventRefused)
			if len(refused) != 1 || refused[0]["refusal"] != "stale" || r.records(t, safewrite.EventApproval) != nil {
				t.Errorf("refusals %v", refused)
			}
			if len(r.s.PendingWrites) != 0 || (tt.purpose == PurposeStub) != (r.s.Regenerate == PurposeStub) {
				t.Errorf("after the refusal: pending %v, regenerate %q", r.s.PendingWrites, r.s.Regenerate)
			}
		})
	}
}

// The approver of an approved write approves that write only.
func TestBoundApproverApprovesOnlyWhatWasShown(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	original := helpers(37)
	testenv.WriteFiles(t, root, map[string]string{"helpers.py": original})
	pw := PendingWrite{Path: "helpers.py", Purpose: PurposeImplement, Content: gutted, Strategy: string(safewrite.Replace),
		OldSHA256: sha256Hex([]byte(original)), NewSHA256: sha256Hex([]byte(gutted))}
	var log bytes.Buffer
	w := &safewrite.Writer{Audit: audit.New(&log, nil), Approver: boundApprover{w: pw, channel: human.ChannelTemporal}}
	other := gutted + "\n\ndef extra():\n    return 2\n"
	_, err := w.Write(t.Context(), safewrite.Request{Root: root, Path: "helpers.py", Content: []byte(other), Actor: "test"})
	if err == nil || !strings.Contains(err.Error(), "is for other content") {
		t.Fatalf("other content: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "helpers.py")); string(b) != original {
		t.Fatal("other content was written under the approval")
	}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: root, Path: "helpers.py", Content: []byte(gutted), Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `"approval":"approved","old_lines":149,"new_lines":9,"channel":"temporal"`) {
		t.Errorf("audit log:\n%s", log.String())
	}
}

// --auto --force writes a large replacement at once (recorded as forced);
// --auto alone refuses it, failing the run: no answer could lift it.
func TestAutoAndForceDecideWithoutTheWriteReview(t *testing.T) {
	t.Parallel()
	forced := newWriteRun(t, safewrite.Writer{Auto: true, Force: true}, fenced(gutted), fenced("def g():\n    return 1\n"))
	if next, err := forced.run(t, NodeImplement); err != nil || next != NodeGreen || len(forced.s.PendingWrites) != 0 {
		t.Fatalf("--auto --force: %q, %v, pending %v", next, err, forced.s.PendingWrites)
	}
	if forced.read(t, "helpers.py") != gutted {
		t.Error("--auto --force did not write")
	}
	if recs := forced.records(t, safewrite.EventApproval); len(recs) != 1 || recs[0]["approval"] != string(safewrite.ApprovalForced) {
		t.Errorf("approvals %v", recs)
	}

	auto := newWriteRun(t, safewrite.Writer{Auto: true}, fenced(gutted))
	original := auto.read(t, "helpers.py")
	_, err := auto.run(t, NodeImplement)
	var refused *AutoRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, safewrite.ErrNeedsApproval) || human.Needed(err) || !strings.Contains(err.Error(), "--auto --force") {
		t.Fatalf("--auto: %v (needs a human: %v)", err, human.Needed(err))
	}
	if auto.read(t, "helpers.py") != original {
		t.Error("--auto replaced the file")
	}
}

// Revise sends the round back to the coder with the feedback, which its
// next prompt carries; the round a scaffold review sends back is the one
// it was (stubs stay stubs even when the last red would ask for tests).
func TestWriteReviewReviseReachesTheCoder(t *testing.T) {
	t.Parallel()
	keep := "keep every helper; add multiply at the end"
	// A stub may only add to a file that exists (a gutting one is refused
	// before any review), but a whole file over 100 lines still waits.
	r := newWriteRun(t, safewrite.Writer{}, fenced(helpers(37)+"\n\ndef multiply(a, b):\n    raise NotImplementedError\n"),
		fenced(helpers(37)+"\n\ndef multiply(a, b):\n    return a * b\n"))
	r.s.Files = r.s.Files[:2] // the test file and helpers.py
	// A stub round sent back: without Regenerate this state (no red yet)
	// would have the tests written.
	r.s.Regenerate, r.s.Stubbed = PurposeStub, true
	next, err := r.run(t, NodeScaffold)
	if err != nil {
		t.Fatal(err)
	}
	if next != NodeScaffoldWriteReview || len(r.s.PendingWrites) != 1 || r.s.PendingWrites[0].Purpose != PurposeStub {
		t.Fatalf("stub round: next %q, pending %+v", next, r.s.PendingWrites)
	}
	g := r.graph()
	q, err := g.Ask(t.Context(), NodeScaffoldWriteReview, &r.s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q.Title, "compiling stubs") {
		t.Errorf("title %q", q.Title)
	}
	next, err = g.Decide(NodeScaffoldWriteReview, &r.s, q, human.Answer{Gate: NodeScaffoldWriteReview, Key: AnswerRevise, Text: "  " + keep + "\n", Channel: human.ChannelTerminal})
	if err != nil || next != NodeScaffold {
		t.Fatalf("revise: %q, %v", next, err)
	}
	if r.s.WriteFeedback != keep || !slices.Equal(r.s.WriteFeedbackPaths, []string{"helpers.py"}) || r.s.Regenerate != PurposeStub || len(r.s.PendingWrites) != 0 {
		t.Fatalf("after revise: %+v", r.s)
	}
	// The revised stubs replace the file whole again: asked again.
	if next, err = r.run(t, NodeScaffold); err != nil || next != NodeScaffoldWriteReview || len(r.s.PendingWrites) != 1 || r.s.PendingWrites[0].Purpose != PurposeStub {
		t.Fatalf("the revised round: %q, %v, pending %+v", next, err, r.s.PendingWrites)
	}
	if q, err = g.Ask(t.Context(), NodeScaffoldWriteReview, &r.s); err != nil {
		t.Fatal(err)
	}
	if next, err = g.Decide(NodeScaffoldWriteReview, &r.s, q, human.Answer{Gate: NodeScaffoldWriteReview, Key: AnswerApprove, Channel: human.ChannelTerminal}); err != nil || next != NodeScaffoldApplyWrites {
		t.Fatalf("approve: %q, %v", next, err)
	}
	if next, err = r.run(t, NodeScaffoldApplyWrites); err != nil || next != NodeRed {
		t.Fatalf("apply the stubs: %q, %v", next, err)
	}
	prompts := r.coder.prompts
	if len(prompts) != 2 || !strings.Contains(prompts[1], "compiling stubs") || !strings.Contains(prompts[1], keep) ||
		!strings.Contains(prompts[1], "You wrote helpers.py whole") || strings.Contains(prompts[0], keep) {
		t.Errorf("the revised round's prompt does not carry the feedback (%d prompts):\n%s", len(prompts), prompts[len(prompts)-1])
	}
	if !strings.Contains(r.read(t, "helpers.py"), "def multiply(a, b):") || !strings.Contains(r.read(t, "helpers.py"), "def f37():") {
		t.Error("the revised stubs were not written")
	}
	for name, text := range map[string]string{"scaffold": scaffoldText(&r.s, "test_helpers.py", nil), "stub": stubText(&r.s, "helpers.py", "", nil, true),
		"implement": implementText(&r.s, "helpers.py", nil)} {
		if !strings.Contains(text, keep) {
			t.Errorf("the %s prompt does not carry the write review's feedback", name)
		}
	}
}

// The write reviews' answers, purely: approve goes to the gate's apply
// step, revise back to the round (while attempts remain), abort to
// cleanup.
func TestDecideWriteReview(t *testing.T) {
	t.Parallel()
	pending := []PendingWrite{{Path: "a.py", Purpose: PurposeScaffold}, {Path: "b.py", Purpose: PurposeScaffold}}
	tests := []struct {
		gate, key, want string
		check           func(s *State) bool
	}{
		{NodeWriteReview, AnswerApprove, NodeApplyWrites, func(s *State) bool { return s.WritesChannel == human.ChannelTemporal && len(s.PendingWrites) == 2 }},
		{NodeScaffoldWriteReview, AnswerApprove, NodeScaffoldApplyWrites, func(s *State) bool { return len(s.PendingWrites) == 2 }},
		{NodeWriteReview, AnswerRevise, NodeImplement, func(s *State) bool {
			return s.WriteFeedback == "why" && len(s.PendingWrites) == 0 && slices.Equal(s.WriteFeedbackPaths, []string{"a.py", "b.py"}) && s.Regenerate == ""
		}},
		{NodeScaffoldWriteReview, AnswerRevise, NodeScaffold, func(s *State) bool { return s.Regenerate == PurposeScaffold && s.WritesChannel == "" }},
		{NodeWriteReview, AnswerAbort, NodeCleanup, func(s *State) bool { return s.Result == ResultAborted && s.Decision == AnswerAbort }},
		{NodeScaffoldWriteReview, AnswerAbort, NodeCleanup, func(s *State) bool { return s.Result == ResultAborted }},
	}
	for _, tt := range tests {
		s := State{PendingWrites: slices.Clone(pending)}
		next, err := decideWriteReview(&s, human.Question{Gate: tt.gate}, human.Answer{Gate: tt.gate, Key: tt.key, Text: "why", Channel: human.ChannelTemporal})
		if err != nil || next != tt.want || !tt.check(&s) {
			t.Errorf("%s %s: next %q (want %q), %v, state %+v", tt.gate, tt.key, next, tt.want, err, s)
		}
	}
	// Spent attempts take revise away.
	r := newWriteRun(t, safewrite.Writer{})
	r.s.PendingWrites = []PendingWrite{{Path: "helpers.py", Purpose: PurposeImplement, Content: gutted, Strategy: string(safewrite.Replace)}}
	r.s.Implementations = MaxImplementations
	q, err := r.graph().Ask(t.Context(), NodeWriteReview, &r.s)
	if err != nil || !slices.Equal(q.Keys(), []string{AnswerApprove, AnswerAbort}) {
		t.Errorf("attempts spent: answers %v, %v", q.Keys(), err)
	}
	if _, err := r.graph().Ask(t.Context(), NodeWriteReview, &State{Worktree: r.repo}); err == nil {
		t.Error("a write review without a pending write asked a question")
	}
}
