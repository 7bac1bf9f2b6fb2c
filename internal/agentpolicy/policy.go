// Package agentpolicy is the part of azero's write policy that applies to
// changes other agents make (Claude Code through `azero hook claude-code`,
// any MCP client through `azero mcp`), shared so that both doors give the
// same answer.
//
// safewrite already refuses paths outside the project root and asks before
// a whole-file replace of a file over safewrite.ApprovalLines lines. What
// it does not see is an edit that guts a large file piece by piece: a
// FIND/REPLACE (or Claude Code's old_string/new_string) whose FIND covers
// most of the file. Guts is that rule: an edit that deletes more than
// review.Threshold of the lines of a file over safewrite.ApprovalLines
// lines needs a human, exactly as the diff gate would flag the file at
// commit time. Adding lines never counts: nothing existing is lost.
//
// The package decides; it never writes.
package agentpolicy

import (
	"fmt"

	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/safewrite"
)

// Large reports whether a file of this many lines is over the approval
// threshold of spec #173 (100 lines are not, 101 are).
func Large(lines int) bool { return lines > safewrite.ApprovalLines }

// Guts reports whether deleting deleted of a file's existing lines guts it:
// the file is large and more than half of its lines go.
func Guts(existingLines, deleted int) bool {
	return Large(existingLines) && float64(deleted) > review.Threshold*float64(existingLines)
}

// ProposalGuts applies Guts to a proposal computed with the edit's result
// as the file's new content.
func ProposalGuts(p safewrite.Proposal) bool {
	return p.Exists && Guts(p.ExistingLines, p.Deleted)
}

// GutReason says what a gutting edit does, for the human who must decide.
func GutReason(p safewrite.Proposal) string {
	return fmt.Sprintf("this edit deletes %d of the %d lines of %s (adding %d; %d lines after it): "+
		"an edit removing more than half of a file over %d lines needs a human's approval",
		p.Deleted, p.ExistingLines, p.Rel, p.Added, p.NewLines, safewrite.ApprovalLines)
}

// ReplaceReason says what a whole-file replace needing approval does.
func ReplaceReason(p safewrite.Proposal) string {
	return fmt.Sprintf("this replaces the whole of %s (%d lines) with %d lines: %d lines would be deleted and %d added. "+
		"Replacing a file of more than %d lines needs a human's approval (a model rewriting a large file often drops code)",
		p.Rel, p.ExistingLines, p.NewLines, p.Deleted, p.Added, safewrite.ApprovalLines)
}
