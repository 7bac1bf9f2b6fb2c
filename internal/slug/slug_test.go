package slug

import (
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"words", "Add a Slugify Helper", 0, "add-a-slugify-helper"},
		{"punctuation runs", "  Hello,   World!!  ", 0, "hello-world"},
		{"path parts", "../etc/passwd", 0, "etc-passwd"},
		{"non-ascii", "Café crème", 0, "caf-cr-me"},
		{"nothing usable", "…!?", 0, ""},
		{"cut at a word", "implement the diff review gate before every commit", 40, "implement-the-diff-review-gate-before"},
		{"cut exactly at a hyphen", "abcd-efgh-ijkl", 9, "abcd-efgh"},
		{"one long word is cut mid-word", strings.Repeat("x", 50), 40, strings.Repeat("x", 40)},
		{"early hyphen is not a boundary", "ab-" + strings.Repeat("y", 50), 40, "ab-" + strings.Repeat("y", 37)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Make(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Make(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if tt.max > 0 && len(got) > tt.max {
				t.Errorf("Make(%q, %d) is %d characters long", tt.in, tt.max, len(got))
			}
		})
	}
}

func TestTitle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"87 - Feature: Add X":               "Add X",
		"#12: fix: crash on save":           "crash on save",
		"Plain title":                       "Plain title",
		"2026 plans":                        "2026 plans",
		"LLD: Add multiply (#7)":            "Add multiply",
		"Low-Level Design - Add multiply":   "Add multiply",
		"Issue #7: Add multiply":            "Add multiply",
		"issue 7 - Add multiply":            "Add multiply",
		"#7 Add multiply":                   "Add multiply",
		"[#7] Add multiply":                 "Add multiply",
		"Add multiply (Issue #7)":           "Add multiply",
		"Add multiply - #7":                 "Add multiply",
		"LLD for the parser":                "LLD for the parser",
		"Issue tracker cleanup":             "Issue tracker cleanup",
		"Support C# 12 records":             "Support C# 12 records",
		"Design: Feature: Add X [issue 12]": "Add X",
	} {
		if got := Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzMake(f *testing.F) {
	for _, s := range []string{"Add a helper", "../x", "a--b", "Ünïcode"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, maxLen int) {
		maxLen %= 100
		got := Make(s, maxLen)
		if maxLen > 0 && len(got) > maxLen {
			t.Fatalf("Make(%q, %d) = %q: too long", s, maxLen, got)
		}
		if strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Fatalf("Make(%q, %d) = %q: stray hyphen", s, maxLen, got)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("Make(%q, %d) = %q: unsafe character %q", s, maxLen, got, r)
			}
		}
		if Make(got, maxLen) != got {
			t.Fatalf("Make is not idempotent on %q", got)
		}
	})
}

// FuzzTitle: Title only takes text away from the ends of a title.
func FuzzTitle(f *testing.F) {
	for _, s := range []string{"87 - Feature: Add X", "LLD: Add (#7)", "#7", "Issue #7: x - #8", "[#1] (#2) #3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Title(s)
		if got != strings.TrimSpace(got) {
			t.Fatalf("Title(%q) = %q: not trimmed", s, got)
		}
		if !strings.Contains(s, got) {
			t.Fatalf("Title(%q) = %q: not a part of the title", s, got)
		}
	})
}
