package cli

import "testing"

func TestTitleAndSlugOfADesign(t *testing.T) {
	t.Parallel()
	tests := []struct{ title, clean, slug string }{
		{"42 - Feature: Slugify makes URL slugs", "Slugify makes URL slugs", "slugify-makes-url-slugs"},
		{"#87: Bug: Pytest exit codes", "Pytest exit codes", "pytest-exit-codes"},
		{"Governance Workflow StateGraph", "Governance Workflow StateGraph", "governance-workflow-stategraph"},
		{"324 - Bug: Diff-based Generation for Large File Modifications", "Diff-based Generation for Large File Modifications", "diff-based-generation-for-large-file-mod"},
		{"!!!", "!!!", "change"},
	}
	for _, tt := range tests {
		if got := titleOf(tt.title); got != tt.clean {
			t.Errorf("titleOf(%q) = %q, want %q", tt.title, got, tt.clean)
		}
		if got := slugOf(tt.title); got != tt.slug {
			t.Errorf("slugOf(%q) = %q, want %q", tt.title, got, tt.slug)
		}
	}
}
