package governance

import (
	"strings"
	"testing"
)

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
			if got := AddedLines(draft, tt.after); got != tt.want {
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
		got := AddedLines(before, after)
		if got == "" {
			return
		}
		for _, l := range strings.Split(got, "\n") {
			if l != "..." && (!strings.HasPrefix(l, "+") || !have[l[1:]] || had[strings.TrimSpace(l[1:])]) {
				t.Fatalf("AddedLines(%q, %q) = %q: line %q is not one of the new text's", before, after, got, l)
			}
		}
	})
}
