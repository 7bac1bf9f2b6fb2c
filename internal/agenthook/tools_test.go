package agenthook

import "testing"

func TestNoOpinion(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"Read": true, "Glob": true, "Grep": true, "WebFetch": true, "TodoWrite": true, "Task": true,
		"mcp__azero__azero_write": true, "mcp__referee__azero_apply": true, "mcp__my__server__azero_gate": true,
		// Tools that may write or commit, or that azero does not know.
		"PowerShell": false, "Frobnicate": false, "mcp__filesystem__write_file": false, "mcp__azero__other": false,
		"mcp__azero_write": false, "mcp____azero_write": false, "azero_write": false, "read": false, "": false,
	}
	for tool, want := range cases {
		if got := noOpinion(tool); got != want {
			t.Errorf("noOpinion(%q) = %v, want %v", tool, got, want)
		}
	}
}
