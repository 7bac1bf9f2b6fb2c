package agenthook

import (
	"errors"
	"strings"
	"testing"
)

func TestApplyEdits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		content string
		exists  bool
		edits   []StringEdit
		want    string
		wantErr string
	}{
		{"single", "a\nb\nc\n", true, []StringEdit{{OldString: "b\n", NewString: "B\n"}}, "a\nB\nc\n", ""},
		{"inside a line", "let x = 1;\n", true, []StringEdit{{OldString: "x = 1", NewString: "x = 2"}}, "let x = 2;\n", ""},
		{"replace all", "x x x\n", true, []StringEdit{{OldString: "x", NewString: "y", ReplaceAll: true}}, "y y y\n", ""},
		{"ambiguous", "x x\n", true, []StringEdit{{OldString: "x", NewString: "y"}}, "", "occurs 2 times"},
		{"missing", "a\n", true, []StringEdit{{OldString: "zzz", NewString: "y"}}, "", "does not occur"},
		{"sequential multi", "a\nb\n", true, []StringEdit{{OldString: "a", NewString: "c"}, {OldString: "c\nb", NewString: "done"}}, "done\n", ""},
		{"second of multi missing", "a\nb\n", true, []StringEdit{{OldString: "a", NewString: "c"}, {OldString: "a", NewString: "d"}}, "", "edit 2 of 2"},
		{"create missing file", "", false, []StringEdit{{OldString: "", NewString: "new\n"}}, "new\n", ""},
		{"fill empty file", "", true, []StringEdit{{OldString: "", NewString: "new\n"}}, "new\n", ""},
		{"empty old on content", "a\n", true, []StringEdit{{OldString: "", NewString: "x"}}, "", "old_string is empty"},
		{"missing file", "", false, []StringEdit{{OldString: "a", NewString: "b"}}, "", "does not exist"},
		{"curly quotes in file", "say(\u201chi\u201d)\n", true, []StringEdit{{OldString: `say("hi")`, NewString: `say("bye")`}}, "say(\"bye\")\n", ""},
		{"curly quotes in old", "it's\n", true, []StringEdit{{OldString: "it\u2019s", NewString: "it is"}}, "it is\n", ""},
		{"crlf file with lf edit", "a\r\nb\r\nc\r\n", true, []StringEdit{{OldString: "a\nb\n", NewString: "x\ny\n"}}, "x\r\ny\r\nc\r\n", ""},
		{"no edits", "a", true, nil, "", "no edits"},
		{"deletion", "keep\ndrop\n", true, []StringEdit{{OldString: "drop\n", NewString: ""}}, "keep\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ApplyEdits(tc.content, tc.exists, tc.edits)
			if tc.wantErr != "" {
				var ee *EditError
				if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want an *EditError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNormalizeQuotesOffsets(t *testing.T) {
	t.Parallel()
	s := "a\u2018b\u201dc é"
	norm, off := normalizeQuotes(s)
	if norm != "a'b\"c é" {
		t.Fatalf("norm = %q", norm)
	}
	if len(off) != len(norm)+1 || off[len(norm)] != len(s) {
		t.Fatalf("offsets %v do not cover %q", off, s)
	}
	for i := range norm {
		if norm[i] == '\'' || norm[i] == '"' {
			continue
		}
		if s[off[i]] != norm[i] {
			t.Errorf("offset %d maps %q to %q", i, norm[i], s[off[i]])
		}
	}
}
