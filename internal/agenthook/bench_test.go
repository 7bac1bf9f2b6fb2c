package agenthook_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/azero-dev/azero/internal/agenthook"
	"github.com/azero-dev/azero/internal/agenthook/hooktest"
)

// BenchmarkDecide measures a whole decision, git processes included, for
// the payloads Claude Code sends most.
func BenchmarkDecide(b *testing.B) {
	for _, fixture := range []string{"write_replace_large.json", "edit_small_change.json", "notebook_replace_small_change.json", "bash_commit_flagged.json", "bash_ls.json"} {
		b.Run(fixture, func(b *testing.B) {
			repo := hooktest.NewRepo(b)
			hooktest.AddNotebooks(b, repo)
			hooktest.StageGutBig(b, repo)
			payload := hooktest.Payload(b, fixture, repo)
			h := &agenthook.Hook{WorkDir: repo}
			for b.Loop() {
				if err := h.Run(b.Context(), bytes.NewReader(payload), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
