package agentpolicy

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
)

func TestGuts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		existing, deleted int
		want              bool
	}{
		{"100 lines is not large", 100, 100, false},
		{"101 lines, all deleted", 101, 101, true},
		{"exactly half is not more than half", 200, 100, false},
		{"one more than half", 200, 101, true},
		{"nothing deleted", 500, 0, false},
		{"empty file", 0, 0, false},
	}
	for _, tc := range cases {
		if got := Guts(tc.existing, tc.deleted); got != tc.want {
			t.Errorf("%s: Guts(%d, %d) = %v, want %v", tc.name, tc.existing, tc.deleted, got, tc.want)
		}
	}
}

func TestProposalGuts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	big := strings.Repeat("line\n", 150)
	w := &safewrite.Writer{Force: true}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: root, Path: "big.txt", Content: []byte(big)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{strings.Repeat("line\n", 60), true},
		{strings.Repeat("line\n", 100), false},
		{big + "more\n", false},
	} {
		p, err := safewrite.Propose(safewrite.Request{Root: root, Path: "big.txt", Content: []byte(tc.content)})
		if err != nil {
			t.Fatal(err)
		}
		if got := ProposalGuts(p); got != tc.want {
			t.Errorf("%d lines -> %d: ProposalGuts = %v, want %v", 150, p.NewLines, got, tc.want)
		}
		if tc.want && !strings.Contains(GutReason(p), "deletes 90 of the 150 lines of big.txt") {
			t.Errorf("reason %q", GutReason(p))
		}
	}
	p, err := safewrite.Propose(safewrite.Request{Root: root, Path: "new.txt", Content: []byte("x\n")})
	if err != nil || ProposalGuts(p) {
		t.Errorf("a new file guts nothing: %v %v", ProposalGuts(p), err)
	}
}
