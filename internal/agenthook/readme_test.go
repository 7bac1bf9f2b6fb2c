package agenthook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
)

// readmeHookTable returns the rows of the README's table of the hook's
// answers: the tool call, and azero's answer.
func readmeHookTable(t *testing.T) [][2]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n| tool call | azero's answer |\n|---|---|\n")
	if !ok {
		t.Fatal("the README has no table of the hook's answers")
	}
	var rows [][2]string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 {
			t.Fatalf("a row of the table has %d cells: %q", len(cells), line)
		}
		rows = append(rows, [2]string{cells[0], cells[1]})
	}
	return rows
}

// readmeDecision reads the decision a row of the table promises: the
// first of deny, ask, allow and "no opinion" its answer names.
func readmeDecision(answer string) (string, bool) {
	best, at := "", len(answer)+1
	for _, d := range []string{"deny", "ask", "allow", "no opinion"} {
		if i := strings.Index(answer, d); i >= 0 && i < at {
			best, at = d, i
		}
	}
	if best == "no opinion" {
		return "", true
	}
	return best, best != ""
}

// TestREADMEHookTable answers, for every row of the README's table, the
// recorded payloads of that case, and checks the decision (and what the
// row says the reason holds) against the row.
func TestREADMEHookTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		call     string   // the start of the row's first cell
		fixtures []string // payloads of the case
		reason   string   // what every reason must hold, as the row promises
	}{
		{"a write outside the repository", []string{"write_outside_root.json", "write_through_symlink.json", "write_into_git.json",
			"notebook_outside.json", "notebook_into_git.json", "notebook_through_symlink.json"}, "never inside .git, and never through a symlink"},
		{"any write when Claude Code's cwd is in no git repository", []string{"write_cwd_not_a_repository.json", "write_cwd_inside_git_dir.json"}, "no project root"},
		{"`Write` replacing", []string{"write_replace_large.json"}, "The lines it would delete (the first 20 of"},
		{"`Edit`/`MultiEdit` deleting", []string{"edit_guts_large.json", "multiedit_guts.json"}, "The lines it would delete"},
		{"`NotebookEdit` deleting", []string{"notebook_delete_large_cell.json", "notebook_replace_large_cell.json", "notebook_legacy_delete.json"}, "The lines it would delete"},
		{"an edit whose `old_string`", []string{"edit_old_string_missing.json", "multiedit_second_missing.json"}, "read the file again"},
		{"a `NotebookEdit` of a notebook that does not exist", []string{"notebook_missing.json", "notebook_malformed.json",
			"notebook_unknown_cell.json", "notebook_legacy_unknown_cell.json"}, "azero cannot check this NotebookEdit"},
		{"a change to `.claude/settings", []string{"edit_settings.json"}, "needs your approval"},
		{"any other write", []string{"write_new_file.json", "write_small_file.json", "edit_small_change.json", "multiedit_ok.json",
			"notebook_replace_small_change.json", "notebook_delete_small_cell.json", "notebook_insert.json"}, "azero: "},
		{"`git commit` in a Bash command", []string{"bash_commit_flagged.json", "bash_commit_no_verify.json", "bash_commit_all_unstaged.json",
			"bash_add_and_commit.json", "bash_commit_amend.json", "bash_cd_and_commit.json", "bash_commit_sh_c_env.json"}, "azero: `git "},
		{"other Bash commands", []string{"bash_ls.json", "bash_commit_clean.json", "read_tool.json", "mcp_tool.json"}, ""},
		{"any other tool", []string{"unknown_tool.json", "mcp_other_server_tool.json"}, "cannot tell whether it writes"},
	}
	setups := map[string]hooktest.Case{}
	for _, c := range hooktest.Cases() {
		setups[c.Fixture] = c
	}
	table := readmeHookTable(t)
	if len(table) != len(rows) {
		t.Errorf("the README's table has %d rows, this test knows %d: keep them one to one", len(table), len(rows))
	}
	for i, row := range table {
		if i >= len(rows) {
			break
		}
		want := rows[i]
		if !strings.HasPrefix(row[0], want.call) {
			t.Errorf("row %d of the README's table is %q, want the case %q", i+1, row[0], want.call)
			continue
		}
		decision, ok := readmeDecision(row[1])
		if !ok {
			t.Errorf("row %q promises no decision: %q", row[0], row[1])
			continue
		}
		for _, fixture := range want.fixtures {
			t.Run(strings.TrimSuffix(fixture, ".json"), func(t *testing.T) {
				t.Parallel()
				c, ok := setups[fixture]
				if !ok {
					t.Fatalf("%s is not a recorded case", fixture)
				}
				repo := hooktest.NewRepo(t)
				if c.Setup != nil {
					c.Setup(t, repo)
				}
				stdout, err, _ := run(t, hooktest.Payload(t, fixture, repo), repo)
				if err != nil {
					t.Fatal(err)
				}
				var a hooktest.Answer
				if stdout != "" {
					if err := json.Unmarshal([]byte(stdout), &a); err != nil {
						t.Fatalf("stdout is not JSON: %q", stdout)
					}
				}
				h := a.HookSpecificOutput
				if h.PermissionDecision != decision {
					t.Errorf("the README says %q for %q; the hook answers %q: %s", decision, row[0], h.PermissionDecision, h.PermissionDecisionReason)
				}
				if !strings.Contains(h.PermissionDecisionReason, want.reason) {
					t.Errorf("the reason lacks %q, as the README's %q promises:\n%s", want.reason, row[1], h.PermissionDecisionReason)
				}
			})
		}
	}
}
