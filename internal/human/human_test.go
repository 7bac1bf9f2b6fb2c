package human

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var approveQ = Question{Gate: "review", Kind: Word, Options: []Option{
	{Key: "approve", Decision: "APPROVED"},
	{Key: "revise", Decision: "REVISE", Text: "What should change?"},
	{Key: "abort", Decision: "ABORTED"},
}}

var menuQ = Question{Gate: "edit", Kind: Menu, Options: []Option{
	{Key: "A", Label: "Approve", Decision: "approve", Confirm: "override"},
	{Key: "M", Label: "Manual", Decision: "manual"},
}, Unattended: &Option{Key: "not_required", Decision: "NOT_REQUIRED"}}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		q     Question
		input string
		want  string // "" for no match
	}{
		{"word in full", approveQ, "approve", "approve"},
		{"word in another case", approveQ, "  APPROVE ", "approve"},
		{"partial word", approveQ, "appr", ""},
		{"first letter of a word", approveQ, "a", ""},
		{"empty", approveQ, "", ""},
		{"word with more", approveQ, "approve!", ""},
		{"menu key", menuQ, "m", "M"},
		{"menu label", menuQ, "approve", "A"},
		{"label does not work for words", Question{Kind: Word, Options: []Option{{Key: "yes", Label: "to proceed"}}}, "to proceed", ""},
		{"unattended key is not offered", menuQ, "not_required", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, ok := tt.q.Match(tt.input)
			if (tt.want != "") != ok || o.Key != tt.want {
				t.Errorf("Match(%q) = %q, %v; want %q", tt.input, o.Key, ok, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	editor := Question{Gate: "edit", Kind: Editor, Files: []File{{Name: "draft.md", Content: "x"}}}
	tests := []struct {
		name string
		q    Question
		a    Answer
		ok   bool
	}{
		{"approve", approveQ, Answer{Gate: "review", Key: "approve", Channel: ChannelTerminal}, true},
		{"revise with text", approveQ, Answer{Gate: "review", Key: "revise", Text: "smaller", Channel: ChannelWeb}, true},
		{"revise without text", approveQ, Answer{Gate: "review", Key: "revise", Text: "  ", Channel: ChannelWeb}, false},
		{"unknown key", approveQ, Answer{Gate: "review", Key: "yes", Channel: ChannelWeb}, false},
		{"case matters after matching", approveQ, Answer{Gate: "review", Key: "APPROVE", Channel: ChannelWeb}, false},
		{"wrong gate", approveQ, Answer{Gate: "other", Key: "approve", Channel: ChannelWeb}, false},
		{"no channel", approveQ, Answer{Gate: "review", Key: "approve"}, false},
		{"unattended where none is allowed", approveQ, Answer{Gate: "review", Key: "approve", Channel: ChannelUnattended}, false},
		{"unattended allowed", menuQ, Answer{Gate: "edit", Key: "not_required", Channel: ChannelUnattended}, true},
		{"unattended key from a human channel", menuQ, Answer{Gate: "edit", Key: "not_required", Channel: ChannelWeb}, false},
		{"confirmation typed", menuQ, Answer{Gate: "edit", Key: "A", Confirm: "Override", Channel: ChannelWeb}, true},
		{"confirmation missing", menuQ, Answer{Gate: "edit", Key: "A", Channel: ChannelWeb}, false},
		{"confirmation partial", menuQ, Answer{Gate: "edit", Key: "A", Confirm: "over", Channel: ChannelWeb}, false},
		{"editor answer", editor, Answer{Gate: "edit", Files: map[string]string{"draft.md": "y"}, Channel: ChannelWeb}, true},
		{"editor answer missing a file", editor, Answer{Gate: "edit", Channel: ChannelWeb}, false},
		{"editor answer with an extra file", editor, Answer{Gate: "edit", Files: map[string]string{"draft.md": "y", "../x": "z"}, Channel: ChannelWeb}, false},
		{"text question without text", Question{Gate: "t", Kind: Text}, Answer{Gate: "t", Channel: ChannelWeb}, false},
		{"unknown kind", Question{Gate: "t", Kind: "vote"}, Answer{Gate: "t", Channel: ChannelWeb}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Validate(tt.q, tt.a)
			if (err == nil) != tt.ok {
				t.Errorf("Validate = %v, want ok %v", err, tt.ok)
			}
			var ie *InvalidError
			if err != nil && !errors.As(err, &ie) {
				t.Errorf("error %v is not an InvalidError", err)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	a, err := Parse(approveQ, "Approve", "", "")
	if err != nil || a.Key != "approve" || a.Gate != "review" {
		t.Fatalf("Parse = %+v, %v", a, err)
	}
	if _, err := Parse(approveQ, "approv", "", ""); err == nil {
		t.Error("a partial word was accepted")
	}
}

func TestNeeded(t *testing.T) {
	t.Parallel()
	if !Needed(ErrNoTerminal) || !Needed(errors.Join(errors.New("x"), ErrNoAnswer)) {
		t.Error("Needed misses the no-terminal errors")
	}
	if Needed(errors.New("disk full")) || Needed(nil) {
		t.Error("Needed reports an ordinary error")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"approve", "APPROVE", "a", "", " abort ", "revise"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		a, err := Parse(approveQ, input, "feedback", "")
		if err != nil {
			return
		}
		a.Channel = ChannelWeb
		o, err := Validate(approveQ, a)
		if err != nil {
			t.Fatalf("Parse accepted %q but Validate refuses it: %v", input, err)
		}
		if len(input) < len(o.Key) {
			t.Fatalf("%q answered %q without the whole word", input, o.Key)
		}
	})
}

func TestQuestionCheck(t *testing.T) {
	t.Parallel()
	approve := Option{Key: "approve"}
	tests := []struct {
		name string
		q    Question
		want string // in the error; "" for none
	}{
		{"a word with its answer", Question{Gate: "g", Kind: Word, Options: []Option{approve}}, ""},
		{"a word without answers", Question{Gate: "g", Kind: Word}, "without options"},
		{"a menu without answers", Question{Gate: "g", Kind: Menu}, "without options"},
		{"an editor without files", Question{Gate: "g", Kind: Editor, Options: []Option{approve}}, "edit no file"},
		{"text", Question{Gate: "g", Kind: Text}, ""},
		{"an unknown kind", Question{Gate: "g", Kind: "dance"}, "unknown kind"},
		{"the unattended answer offered to humans", Question{Gate: "g", Kind: Word, Options: []Option{approve},
			Unattended: &Option{Key: "approve"}}, "offers its unattended answer"},
	}
	for _, tt := range tests {
		err := tt.q.Check()
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// A question's id is its content: asked again (another time, another
// nonce) it is the same question; anything a human reads changed, it is
// not.
func TestFingerprintIsTheContent(t *testing.T) {
	t.Parallel()
	q := Question{Gate: "review", Kind: Word, Prompt: "Merge?", Report: "1 file", Options: []Option{{Key: "approve", Decision: "APPROVED"}}}
	id := Fingerprint(q)
	again := q
	again.AskedAt, again.Nonce, again.ID = time.Now(), "0123456789abcdef0123456789abcdef", "whatever"
	if Fingerprint(again) != id {
		t.Error("the same question asked again (its time and nonce) got another id")
	}
	changed := q
	changed.Report = "2 files"
	if Fingerprint(changed) == id {
		t.Error("a question whose report changed kept its id")
	}
}

// The decision record names the channel the engine verified, and the
// channel an answer claimed without proof, when it did.
func TestDecisionRecordKeepsAClaimApart(t *testing.T) {
	t.Parallel()
	q := Question{Gate: "review", Kind: Word, Options: []Option{{Key: "approve", Decision: "APPROVED"}}}
	rec := func(a Answer) map[string]any {
		m := map[string]any{}
		for _, at := range DecisionRecord(q, a, q.Options[0]) {
			m[at.Key] = at.Value.Any()
		}
		return m
	}
	got := rec(Answer{Gate: "review", Key: "approve", Channel: ChannelTemporal, ClaimedChannel: ChannelWeb, By: "Temporal client ops@box", MAC: "00"})
	if got["channel"] != ChannelTemporal || got["claimed_channel"] != ChannelWeb || got["by"] != "Temporal client ops@box" || got["mac"] != nil {
		t.Errorf("record = %v", got)
	}
	if got := rec(Answer{Gate: "review", Key: "approve", Channel: ChannelWeb}); got["claimed_channel"] != nil {
		t.Errorf("an answer that claimed nothing more has a claimed_channel: %v", got)
	}
}

func TestWording(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    Question
		want []string
	}{
		{"approve or reject", Question{Kind: Word, Options: []Option{{Key: "approve"}, {Key: "reject"}}}, []string{"to proceed", "to stop"}},
		{"labels", Question{Kind: Word, Options: []Option{{Key: "approve", Label: "to merge"}, {Key: "abort", Label: "to stop"}}}, []string{"to merge", "to stop"}},
		{"three without labels", approveQ, []string{"", "", ""}},
		{"one labelled of two", Question{Kind: Word, Options: []Option{{Key: "a", Label: "to go"}, {Key: "b"}}}, []string{"to go", ""}},
		{"none", Question{Kind: Text}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.q.Wording()
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Wording = %q, want %q", got, tt.want)
			}
		})
	}
}
