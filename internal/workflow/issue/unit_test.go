package issue

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/governance"
)

func TestGraphEveryModelOutputGoesToAHuman(t *testing.T) {
	t.Parallel()
	g := New(Deps{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// The drafter's output goes only to the draft gate, the reviewer's only
	// to the verdict gate: no model output reaches another model, or the
	// tracker, without a human in between.
	if got := g.Next(NodeDraft); !slices.Equal(got, []string{NodeEditDraft}) {
		t.Errorf("draft goes to %v, want only edit_draft", got)
	}
	if got := g.Next(NodeReview); !slices.Equal(got, []string{NodeEditVerdict}) {
		t.Errorf("review goes to %v, want only edit_verdict", got)
	}
	for _, gate := range []string{NodeEditDraft, NodeEditVerdict} {
		if !g.IsGate(gate) {
			t.Errorf("%s is not a gate", gate)
		}
	}
	if p := g.PathAvoiding(NodeReview, NodeEditDraft); p != nil {
		t.Errorf("the reviewer can be reached without the draft gate: %v", p)
	}
	if p := g.PathAvoiding(NodeFileIssue, NodeEditVerdict); p != nil {
		t.Errorf("filing can be reached without the verdict gate: %v", p)
	}
	if p := g.PathAvoiding(NodeDraft, NodePreflight); p != nil {
		t.Errorf("a model can be called before the pre-flight checks: %v", p)
	}
	// Only a run stopped at the slug collision, before anything exists,
	// ends without a human seeing a draft.
	if p := g.PathAvoiding(flow.End, NodeEditDraft, NodeSlugCollision); p != nil {
		t.Errorf("a run can end without a human seeing a draft: %v", p)
	}
	for _, gate := range []string{NodeSlugCollision, NodeEditDraft, NodeEditVerdict, NodeFilingFailed} {
		if !g.IsGate(gate) {
			t.Errorf("%s asks the human but is not declared a gate", gate)
		}
	}
	if p := g.PathAvoiding(NodeLoadBrief, NodeClaimSlug); p != nil {
		t.Errorf("the trail can start before the slug is claimed: %v", p)
	}
}

func TestRouters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		route  func(string) (string, error)
		choice string
		want   string
	}{
		{"N3 send", RouteAfterDraftEdit, "S", NodeReview},
		{"N3 revise", RouteAfterDraftEdit, "R", NodeDraft},
		{"N3 manual", RouteAfterDraftEdit, "M", NodeManual},
		{"N3 approve is not offered", RouteAfterDraftEdit, "A", ""},
		{"N5 approve", RouteAfterVerdictEdit, "A", NodeFileIssue},
		{"N5 revise", RouteAfterVerdictEdit, "R", NodeDraft},
		{"N5 manual", RouteAfterVerdictEdit, "M", NodeManual},
		{"N5 send is not offered", RouteAfterVerdictEdit, "S", ""},
		{"empty", RouteAfterVerdictEdit, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.route(tt.choice)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("route(%q) = %q, want an error", tt.choice, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("route(%q) = %q, %v; want %q", tt.choice, got, err, tt.want)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"governance-notes.md", "governance-notes"},
		{"notes/governance-notes.md", "governance-notes"},
		{"/abs/Path/My Brief.MD", "my-brief"},
		{"release.v2.notes.md", "release-v2-notes"},
		{"__init__.txt", "init"},
		{"noext", "noext"},
		{".hidden", "hidden"},
		{"..md", ""},
		{"ümlaut-ß.md", "mlaut"},
		{"../../etc/passwd", "passwd"},
		{"a--b  c.md", "a-b-c"},
		{strings.Repeat("x", 100) + ".md", strings.Repeat("x", MaxSlugLen)},
		{strings.Repeat("ab-", 40) + ".md", strings.TrimRight(strings.Repeat("ab-", 21), "-")}, // cut at a word boundary
	}
	for _, tt := range tests {
		if got := SlugFromFile(tt.in); got != tt.want {
			t.Errorf("SlugFromFile(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzCleanSlug(f *testing.F) {
	for _, s := range []string{"governance-notes", "My Brief", "../..", "a\x00b", "ÄÖÜ", "--x--", "", strings.Repeat("ab-", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CleanSlug(s)
		if len(got) > MaxSlugLen {
			t.Fatalf("slug %q longer than %d", got, MaxSlugLen)
		}
		if strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Fatalf("slug %q has stray hyphens", got)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("slug %q has %q", got, r)
			}
		}
		if CleanSlug(got) != got {
			t.Fatalf("CleanSlug is not idempotent on %q", got)
		}
		if got != "" && SlugFromFile(got+".md") != got {
			t.Fatalf("SlugFromFile(%q.md) != %q", got, got)
		}
	})
}

func TestTemplateAndPrompts(t *testing.T) {
	t.Parallel()
	if tracker.ParseTitle(Template()) == "" || len(tracker.ParseLabels(Template())) == 0 {
		t.Error("the template has no title or Labels line the filing step can read")
	}
	if !strings.Contains(ReviewPrompt(), "**Verdict:** APPROVED or BLOCK") {
		t.Error("the review prompt does not ask for a verdict")
	}
	if len(ReviewPromptSHA256()) != 64 {
		t.Error("bad prompt hash")
	}

	s := &State{Brief: "Brief: add a --budget flag", Loop: governance.Loop{Draft: "# Old draft\n\nbody\n"}}
	first := draftRequest(s)
	if msg := first.Messages[0].Text; !strings.HasPrefix(msg, "<brief>\nBrief: add a --budget flag\n</brief>\n") || !strings.Contains(first.System, Template()) ||
		strings.Contains(msg, "<draft>") {
		t.Errorf("first draft request = %+v; want the brief, delimited, and the template", first)
	}
	s.Feedback = "make it shorter"
	rev := draftRequest(s)
	msg := rev.Messages[0].Text
	for _, want := range []string{"<brief>\nBrief: add a --budget flag\n</brief>", "<draft>\n# Old draft\n\nbody\n</draft>", "<feedback>\nmake it shorter\n</feedback>"} {
		if !strings.Contains(msg, want) {
			t.Errorf("revision at N3 = %q; want %q", msg, want)
		}
	}
	if strings.Contains(msg, "<verdict>") || strings.Contains(msg, "<human_edits>") || !strings.Contains(rev.System, Template()) {
		t.Errorf("revision at N3 = %q; no verdict, no edits (none made)", msg)
	}
	if strings.Index(msg, "<brief>") > strings.Index(msg, "<draft>") || strings.Index(msg, "<draft>") > strings.Index(msg, "<feedback>") {
		t.Errorf("revision parts out of order: %q", msg)
	}
	// The human edited the drafter's draft: the edits are marked to keep.
	s.ModelDraft = "# Old draft\n\nbody\n"
	s.Draft = "# Old draft\n\nbody\nThe human's own line.\n"
	msg = draftRequest(s).Messages[0].Text
	if !strings.Contains(msg, "<human_edits>") || !strings.Contains(msg, "+The human's own line.") || !strings.Contains(msg, "Keep them") {
		t.Errorf("revision after a human edit = %q; want the edits marked to keep", msg)
	}
	s.FeedbackVerdict = "**Verdict:** BLOCK\nclean text"
	if msg := draftRequest(s).Messages[0].Text; !strings.Contains(msg, "<verdict>\n**Verdict:** BLOCK\nclean text\n</verdict>") {
		t.Errorf("revision at N5 = %q; want the verdict as the human left it", msg)
	}
	r := reviewRequest(&State{Brief: "the brief", Loop: governance.Loop{Draft: "# Draft\n"}})
	if r.System != ReviewPrompt() || !strings.Contains(r.Messages[0].Text, "<draft>\n# Draft\n</draft>") ||
		!strings.Contains(r.Messages[0].Text, "<brief>\nthe brief\n</brief>") || r.Purpose != "review" {
		t.Errorf("review request = %+v; want the brief and the draft, delimited as for the drafter", r)
	}
}

func TestReviewRequestHoldsTheHumansWordsAsTheirs(t *testing.T) {
	t.Parallel()
	s := &State{Brief: "the brief", Loop: governance.Loop{Draft: "# Draft\n"}}
	if msg := reviewRequest(s).Messages[0].Text; strings.Contains(msg, "<human>") || strings.Contains(msg, "human's own words") {
		t.Errorf("a review without words of the human's = %q", msg)
	}
	s.HumanWords = []HumanWords{
		{Gate: NodeEditDraft, Kind: WordsEdits, Draft: 1, Text: "+Budget is 5 USD."},
		{Gate: NodeEditDraft, Kind: WordsFeedback, Draft: 1, Text: "every workflow"},
		{Gate: NodeEditVerdict, Kind: WordsFeedback, Draft: 2, Verdict: 1, Text: "the default is mine"},
	}
	msg := reviewRequest(s).Messages[0].Text
	want := "<human>\nLines the human wrote into draft #1, at the draft gate (each marked +):\n+Budget is 5 USD.\n\n" +
		"The human's feedback on draft #1, at the draft gate:\nevery workflow\n\n" +
		"The human's feedback on draft #2, at the verdict gate, after reading verdict #1:\nthe default is mine\n</human>"
	if !strings.Contains(msg, want) {
		t.Errorf("review request = %q; want %q", msg, want)
	}
	if strings.Index(msg, "<brief>") > strings.Index(msg, "<human>") || strings.Index(msg, "<human>") > strings.Index(msg, "<draft>") {
		t.Errorf("parts out of order: %q", msg)
	}
	if !strings.Contains(ReviewPrompt(), "The human's words are facts and decisions from the\nperson responsible for the issue") {
		t.Error("the built-in review prompt does not say the human's words are facts")
	}
}
