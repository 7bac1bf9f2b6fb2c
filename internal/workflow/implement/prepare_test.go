package implement

import "testing"

func TestTitleAndBranchOfADesign(t *testing.T) {
	t.Parallel()
	tests := []struct{ issue, title, clean, branch string }{
		{"42", "42 - Feature: Slugify makes URL slugs", "Slugify makes URL slugs", "azero/42-slugify-makes-url-slugs"},
		{"87", "#87: Bug: Pytest exit codes", "Pytest exit codes", "azero/87-pytest-exit-codes"},
		{"", "Governance Workflow StateGraph", "Governance Workflow StateGraph", "azero/governance-workflow-stategraph"},
		// Cut at a word boundary, never mid-word.
		{"324", "324 - Bug: Diff-based Generation for Large File Modifications", "Diff-based Generation for Large File Modifications", "azero/324-diff-based-generation-for-large-file"},
		{"", "!!!", "!!!", "azero/change"},
	}
	for _, tt := range tests {
		if got := TitleOf(tt.title); got != tt.clean {
			t.Errorf("TitleOf(%q) = %q, want %q", tt.title, got, tt.clean)
		}
		if got := BranchName(tt.issue, tt.title); got != tt.branch {
			t.Errorf("BranchName(%q, %q) = %q, want %q", tt.issue, tt.title, got, tt.branch)
		}
	}
}
