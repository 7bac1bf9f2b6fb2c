package issue

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/tracker"
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

func TestParseEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
		want Entry
	}{
		{"001-brief.md", true, Entry{1, KindBrief, "001-brief.md"}},
		{"012-draft-edited.md", true, Entry{12, KindDraftEdited, "012-draft-edited.md"}},
		{"1000-feedback.txt", true, Entry{1000, KindFeedback, "1000-feedback.txt"}},
		{"007-filed.json", true, Entry{7, KindFiled, "007-filed.json"}},
		{"006-verdict-edited.md", true, Entry{6, KindVerdictEdited, "006-verdict-edited.md"}},
		{"01-brief.md", false, Entry{}},
		{"000-brief.md", false, Entry{}},
		{"003-feedback.md", false, Entry{}},
		{"003-draft.txt", false, Entry{}},
		{"003-notes.md", false, Entry{}},
		{"003-draft.md~", false, Entry{}},
		{".003-draft.md.azero-tmp-x", false, Entry{}},
		{"README.md", false, Entry{}},
	}
	for _, tt := range tests {
		got, ok := ParseEntry(tt.name)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseEntry(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"001-brief.md", "002-draft-edited.md", "123456789-filed.json", "1-x.md", "abc", "004-feedback.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		e, ok := ParseEntry(name)
		if !ok {
			return
		}
		if e.N < 1 || e.Name != name {
			t.Fatalf("ParseEntry(%q) = %+v", name, e)
		}
		// Numbers with more digits than the padding round-trip exactly;
		// padded ones print back the same.
		if got := EntryName(e.N, e.Kind); got != name && !strings.HasPrefix(name, "0") {
			t.Fatalf("EntryName(%d, %q) = %q, want %q", e.N, e.Kind, got, name)
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

	s := &State{Brief: "Brief: add a --budget flag", Draft: "# Old draft\n\nbody\n"}
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
	r := reviewRequest(&State{Brief: "the brief", Draft: "# Draft\n"})
	if r.System != ReviewPrompt() || !strings.Contains(r.Messages[0].Text, "<draft>\n# Draft\n</draft>") ||
		!strings.Contains(r.Messages[0].Text, "<brief>\nthe brief\n</brief>") || r.Purpose != "review" {
		t.Errorf("review request = %+v; want the brief and the draft, delimited as for the drafter", r)
	}
}

func TestSplitDraft(t *testing.T) {
	t.Parallel()
	issue := "# Add a budget flag\n**Labels:** feature\n\n## Summary\nText.\n"
	tests := []struct {
		name, reply, draft string
		prose, warned      bool
	}{
		{"the issue alone", issue, issue, false, false},
		{"the issue in one fence", "```markdown\n" + issue + "```\n", issue, false, false},
		{"prose around a markdown block", "Here is the issue you asked for:\n\n```markdown\n" + issue + "```\n\nLet me know if you want changes.", issue, true, false},
		{"prose around an unlabelled block", "Sure.\n```\n" + issue + "```", issue, true, false},
		{"an issue with a code example stays whole", issue + "\n```go\nfunc f() {}\n```\n", issue + "\n```go\nfunc f() {}\n```\n", false, false},
		{"an issue holding a markdown example stays whole", issue + "Example:\n```markdown\n# Not the title\n```\n", issue + "Example:\n```markdown\n# Not the title\n```\n", false, false},
		{"two candidate blocks warn", "Option 1:\n```md\n" + issue + "```\nOption 2:\n```md\n" + issue + "```\n", "", false, true},
		{"an unclosed block warns", "Here it is:\n```markdown\n" + issue, "", false, true},
		{"the prompt's delimiters echoed", "<draft>\n" + issue + "</draft>\n", issue, false, false},
		{"prose and the delimiters echoed", "Here is the revised issue:\n\n<draft>\n" + issue + "</draft>\n", issue, true, false},
		{"delimiters around a fenced issue", "<draft>\n```markdown\n" + issue + "```\n</draft>", issue, false, false},
		{"an issue quoting the delimiters stays whole", issue + "\n<draft>\n# Not the title\n</draft>\n", issue + "\n<draft>\n# Not the title\n</draft>\n", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			draft, prose, warning := SplitDraft(tt.reply)
			if tt.warned {
				if warning == "" || draft != tt.reply {
					t.Errorf("SplitDraft = %q, warning %q; want the reply whole with a warning", draft, warning)
				}
				return
			}
			if warning != "" || draft != tt.draft || (prose != "") != tt.prose {
				t.Errorf("SplitDraft = %q, prose %q, warning %q; want %q", draft, prose, warning, tt.draft)
			}
		})
	}
}

func FuzzSplitDraft(f *testing.F) {
	for _, s := range []string{"# T\nbody\n", "x\n```md\n# T\n```\ny", "```\n# T\n", "````\n```\n# T\n````"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		draft, _, warning := SplitDraft(reply)
		if warning != "" && draft != reply {
			t.Fatalf("a warned reply was cut: %q -> %q", reply, draft)
		}
		if len(draft) > len(reply)+1 {
			t.Fatalf("the draft %q is longer than the reply %q", draft, reply)
		}
	})
}

func TestStripVerdict(t *testing.T) {
	t.Parallel()
	const v = "**Verdict:** APPROVED\n\n## Tier 1: blocking\n\n- None\n"
	for in, want := range map[string]string{
		v:                                  v,
		"<verdict>\n" + v + "</verdict>\n": v,
		"```markdown\n" + v + "```":        v,
		"Review:\n<verdict>\n" + v + "</verdict>": "Review:\n<verdict>\n" + v + "</verdict>",
	} {
		if got := StripVerdict(in); strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("StripVerdict(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVerdictWord(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"**Verdict:** APPROVED\n\nfine", "APPROVED"},
		{"Some intro\n**Verdict:** BLOCK\n", "BLOCK"},
		{"## Verdict: block", "BLOCK"},
		{"verdict - approved", "APPROVED"},
		{"no decision here", ""},
	}
	for _, tt := range tests {
		if got := VerdictWord(tt.in); got != tt.want {
			t.Errorf("VerdictWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzVerdictWord(f *testing.F) {
	f.Add("**Verdict:** APPROVED")
	f.Add("Verdict\n\nBLOCK")
	f.Fuzz(func(t *testing.T, s string) {
		w := VerdictWord(s)
		if w != strings.ToUpper(w) || strings.ContainsAny(w, " \n") {
			t.Fatalf("VerdictWord(%q) = %q", s, w)
		}
	})
}

func TestStripFence(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "# T\n\nbody\n", "# T\n\nbody\n"},
		{"markdown fence", "```markdown\n# T\n\nbody\n```", "# T\n\nbody\n"},
		{"bare fence", "\n```\n# T\n```\n", "# T\n"},
		{"text outside", "Here it is:\n```\n# T\n```", "Here it is:\n```\n# T\n```"},
		{"inner fence kept whole", "```md\n# T\n```mermaid\ngraph\n```\n```", "```md\n# T\n```mermaid\ngraph\n```\n```"},
		{"fence with spaces in info", "``` a b\n# T\n```", "``` a b\n# T\n```"},
	}
	for _, tt := range tests {
		if got := StripFence(tt.in); got != tt.want {
			t.Errorf("%s: StripFence(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func FuzzStripFence(f *testing.F) {
	f.Add("```markdown\n# T\n```")
	f.Add("# T\n")
	f.Add("``````")
	f.Fuzz(func(t *testing.T, s string) {
		got := StripFence(s)
		if got == s {
			return
		}
		// Stripping only removes the fence lines: the body is inside.
		if !strings.Contains(s, strings.TrimSpace(got)) {
			t.Fatalf("StripFence(%q) = %q, not a part of the input", s, got)
		}
		if strings.Count(got, "```") != 0 {
			t.Fatalf("StripFence(%q) = %q still has a fence", s, got)
		}
	})
}

func TestAddedLines(t *testing.T) {
	t.Parallel()
	const draft = "# T\n\n## Summary\n\nModel line one.\nModel line two.\n\n## Scope\n\nModel scope.\n"
	tests := []struct{ name, after, want string }{
		{"unchanged", draft, ""},
		{"only whitespace at the end", draft + "\n\n", ""},
		{"a line added", strings.Replace(draft, "Model line two.\n", "Model line two.\nHuman line.\n", 1), "+Human line."},
		{"a line replaced: only the human's", strings.Replace(draft, "Model line one.", "Human rewrite.", 1), "+Human rewrite."},
		{"a line deleted: nothing of the model's", strings.Replace(draft, "Model line two.\n", "", 1), ""},
		{"two places", strings.Replace(strings.Replace(draft, "# T", "# Human title", 1), "Model scope.", "Model scope.\nHuman scope.", 1),
			"+# Human title\n...\n+Human scope."},
		{"blank lines added say nothing", strings.Replace(draft, "Model line two.\n", "Model line two.\n\n\n", 1), ""},
		{"a model line moved is not the human's", strings.Replace(strings.Replace(draft, "Model line one.\n", "", 1), "Model scope.", "Model scope.\nModel line one.", 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := addedLines(draft, tt.after); got != tt.want {
				t.Errorf("addedLines = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzAddedLines: what addedLines returns is lines of the new text, each
// marked "+", with "..." between places; never a line the old text has.
func FuzzAddedLines(f *testing.F) {
	f.Add("# T\n\nmodel\n", "# T\n\nmodel\nhuman\n")
	f.Add("a\nb\nc\n", "x\nb\ny\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		have, had := map[string]bool{}, map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(after), "\n") {
			have[l] = true
		}
		for _, l := range strings.Split(before, "\n") {
			had[strings.TrimSpace(l)] = true
		}
		got := addedLines(before, after)
		if got == "" {
			return
		}
		for _, l := range strings.Split(got, "\n") {
			if l != "..." && (!strings.HasPrefix(l, "+") || !have[l[1:]] || had[strings.TrimSpace(l[1:])]) {
				t.Fatalf("addedLines(%q, %q) = %q: line %q is not one of the new text's", before, after, got, l)
			}
		}
	})
}

func TestReviewRequestHoldsTheHumansWordsAsTheirs(t *testing.T) {
	t.Parallel()
	s := &State{Brief: "the brief", Draft: "# Draft\n"}
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
