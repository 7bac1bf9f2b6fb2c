// Package hooktest holds recorded Claude Code PreToolUse payloads (in
// Claude Code's real shape, testdata/payloads) and the decisions azero
// must answer them with, for the tests of the hook library and of the
// azero binary. It is imported only by tests.
//
// A payload names the repository as $REPO; each case builds a real git
// repository in t.TempDir(), brings it into the case's state, and
// substitutes its path.
package hooktest

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

//go:embed testdata/payloads
var payloads embed.FS

// notebooks are real Jupyter notebooks written by nbformat 5.5 (Debian's
// python3-nbformat): analysis.ipynb (nbformat 4.5, cells with ids: intro
// 3 lines, load 90, clean 20, plot 37: 150 lines of cell source) and
// legacy.ipynb (nbformat 4.4, no ids: 1, 100 and 19 lines, the last
// cell's source one string rather than a list).
//
//go:embed testdata/notebooks
var notebooks embed.FS

// ExitBlock is the Decision of a case the hook must answer with exit
// status 2 (a payload of another hook event).
const ExitBlock = "exit 2"

// Case is one recorded payload and the answer it must get.
type Case struct {
	Fixture  string                          // file in testdata/payloads
	Setup    func(t testing.TB, repo string) // brings the repository into the case's state; nil: as committed
	Decision string                          // allow, ask, deny, "" (no opinion: nothing printed) or ExitBlock
	Reason   []string                        // substrings of permissionDecisionReason
}

// Lines of the committed files.
const (
	BigLines   = 200 // big.py
	StateLines = 270 // src/state.py
	SmallLines = 10  // small.py
)

// Cases are every recorded payload with its expected answer.
func Cases() []Case {
	return []Case{
		{Fixture: "write_new_file.json", Decision: "allow", Reason: []string{"new file src/new_module.py"}},
		{Fixture: "write_small_file.json", Decision: "allow", Reason: []string{"small.py has 10 lines"}},
		{Fixture: "write_replace_large.json", Decision: "ask", Reason: []string{"src/state.py (270 lines) with 56 lines", "270 lines would be deleted", "more than 100 lines",
			"The lines it would delete (the first 20 of 270):\n-state_1 = 1\n-state_2 = 2\n", "\n-state_20 = 20\n… and 250 more"}},
		{Fixture: "write_outside_root.json", Decision: "deny", Reason: []string{"outside the project root"}},
		{Fixture: "write_through_symlink.json", Decision: "deny", Reason: []string{"through a symlink", "outside the project root"}},
		{Fixture: "write_into_git.json", Decision: "deny", Reason: []string{".git"}},
		{Fixture: "write_missing_content.json", Decision: "deny", Reason: []string{"no content"}},
		{Fixture: "write_cwd_not_a_repository.json", Decision: "deny", Reason: []string{"not inside a git work tree", "no project root"}},
		{Fixture: "write_cwd_inside_git_dir.json", Decision: "deny", Reason: []string{"not inside a git work tree"}},
		{Fixture: "edit_small_change.json", Decision: "allow", Reason: []string{"big.py -1 +1 of 200 lines"}},
		{Fixture: "edit_old_string_missing.json", Decision: "deny", Reason: []string{"old_string does not occur", "read the file again"}},
		{Fixture: "edit_ambiguous.json", Decision: "deny", Reason: []string{"occurs 200 times", "replace_all"}},
		{Fixture: "edit_guts_large.json", Decision: "ask", Reason: []string{"deletes 150 of the 200 lines of big.py", "more than half",
			"The lines it would delete (the first 20 of 150):\n-value_1 = 1\n", "\n-value_20 = 20\n… and 130 more"}},
		{Fixture: "edit_settings.json", Decision: "ask", Reason: []string{".claude/settings.json configures Claude Code's hooks"}},
		{Fixture: "multiedit_ok.json", Decision: "allow", Reason: []string{"big.py -2 +3 of 200 lines"}},
		{Fixture: "multiedit_guts.json", Decision: "ask", Reason: []string{"deletes 120 of the 200 lines of big.py", "The lines it would delete (the first 20 of 120):", "… and 100 more"}},
		{Fixture: "multiedit_second_missing.json", Decision: "deny", Reason: []string{"edit 2 of 2", "does not occur"}},
		{Fixture: "notebook_outside.json", Decision: "deny", Reason: []string{"outside the project root"}},
		{Fixture: "notebook_into_git.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{".git"}},
		{Fixture: "notebook_through_symlink.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{"through a symlink", "outside the project root"}},
		{Fixture: "notebook_delete_large_cell.json", Setup: AddNotebooks, Decision: "ask", Reason: []string{
			"deleting cell load", "deletes 90 of the 150 lines of cell source of analysis.ipynb", "more than half",
			"The lines it would delete (the first 20 of 90):\n-rows_1 = load(1)\n", "-rows_20 = load(20)\n… and 70 more"}},
		{Fixture: "notebook_replace_large_cell.json", Setup: AddNotebooks, Decision: "ask", Reason: []string{
			"replacing cell load", "deletes 90 of the 150 lines", "(adding 1)", "-rows_1 = load(1)"}},
		{Fixture: "notebook_replace_small_change.json", Setup: AddNotebooks, Decision: "allow", Reason: []string{"analysis.ipynb, replacing cell clean: -1 +1 of 150 lines of cell source"}},
		{Fixture: "notebook_delete_small_cell.json", Setup: AddNotebooks, Decision: "allow", Reason: []string{"deleting cell plot: -37 +0 of 150 lines"}},
		{Fixture: "notebook_insert.json", Setup: AddNotebooks, Decision: "allow", Reason: []string{"inserting a cell after intro: -0 +2 of 150 lines"}},
		{Fixture: "notebook_unknown_cell.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{
			`no cell with the id "summary"`, `its cells are "intro", "load", "clean", "plot"`, "read the notebook again"}},
		{Fixture: "notebook_legacy_delete.json", Setup: AddNotebooks, Decision: "ask", Reason: []string{"deleting cell cell-1", "deletes 100 of the 120 lines of cell source of legacy.ipynb", "-legacy_1 = 1"}},
		{Fixture: "notebook_legacy_unknown_cell.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{`no cell with the id "cell-7"`, `"cell-0", "cell-1", "cell-2"`}},
		{Fixture: "notebook_malformed.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{"broken.ipynb", "not valid notebook JSON", "repair it with Write"}},
		{Fixture: "notebook_missing.json", Setup: AddNotebooks, Decision: "deny", Reason: []string{"missing.ipynb", "does not exist", "create it with Write"}},
		{Fixture: "bash_ls.json", Decision: ""},
		{Fixture: "bash_ls_outside_repository.json", Decision: ""},
		{Fixture: "bash_commit_clean.json", Setup: StageSmallChange, Decision: ""},
		{Fixture: "bash_commit_flagged.json", Setup: StageGutBig, Decision: "ask", Reason: []string{"flagged 1 of the 1 file", "big.py (200 -> 10 lines", "the staged changes"}},
		{Fixture: "bash_commit_no_verify.json", Setup: StageSmallChange, Decision: "ask", Reason: []string{"--no-verify"}},
		{Fixture: "bash_commit_all_unstaged.json", Setup: DeleteBigUnstaged, Decision: "ask", Reason: []string{"DELETED  big.py (all 200 lines removed)", "because of -a"}},
		{Fixture: "bash_add_and_commit.json", Setup: GutStateUnstaged, Decision: "ask", Reason: []string{"src/state.py (270 -> 5 lines", "changes the index before it"}},
		{Fixture: "bash_commit_amend.json", Setup: CommitGutState, Decision: "ask", Reason: []string{"src/state.py (270 -> 5 lines", "--amend"}},
		{Fixture: "bash_cd_and_commit.json", Setup: StageGutState, Decision: "ask", Reason: []string{"src/state.py"}},
		{Fixture: "bash_commit_sh_c_env.json", Setup: GutStateUnstaged, Decision: "ask", Reason: []string{"src/state.py (270 -> 5 lines", "because of -a"}},
		{Fixture: "bash_commit_no_verify_clustered.json", Setup: StageSmallChange, Decision: "ask", Reason: []string{"--no-verify"}},
		{Fixture: "read_tool.json", Decision: ""},
		{Fixture: "mcp_tool.json", Decision: ""},
		{Fixture: "mcp_other_server_tool.json", Decision: "deny", Reason: []string{"does not know the tool mcp__filesystem__write_file", "matcher"}},
		{Fixture: "unknown_tool.json", Decision: "deny", Reason: []string{"does not know the tool Frobnicate"}},
		{Fixture: "post_tool_use.json", Decision: ExitBlock},
		{Fixture: "malformed.txt", Decision: "deny", Reason: []string{"not a JSON object"}},
	}
}

// Payload returns the fixture with $REPO replaced by repo.
func Payload(t testing.TB, fixture, repo string) []byte {
	t.Helper()
	data, err := payloads.ReadFile("testdata/payloads/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(repo)
	return []byte(strings.ReplaceAll(string(data), "$REPO", strings.Trim(string(quoted), `"`)))
}

// Fixtures lists the payload files.
func Fixtures(t testing.TB) []string {
	t.Helper()
	entries, err := payloads.ReadDir("testdata/payloads")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// NewRepo creates the repository the payloads talk about, committed on
// main: big.py (200 lines), small.py (10), src/state.py (270),
// .claude/settings.json; and link_out, an ignored symlink to a directory
// outside the repository.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "big.py", numbered("value_%d = %d\n", BigLines))
	write(t, dir, "small.py", numbered("small_%d = %d\n", SmallLines))
	write(t, dir, "src/state.py", numbered("state_%d = %d\n", StateLines))
	write(t, dir, ".claude/settings.json", "{\n  \"hooks\": {}\n}\n")
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-q", "-m", "initial")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link_out")); err != nil {
		t.Fatal(err)
	}
	// The link is a test device, not a change: keep git status clean.
	write(t, dir, ".git/info/exclude", "link_out\n")
	return dir
}

func numbered(format string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format, i, i)
	}
	return b.String()
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// StageSmallChange stages a new small file and a one-line change.
func StageSmallChange(t testing.TB, repo string) {
	write(t, repo, "src/helper.py", "def helper():\n    return 1\n")
	write(t, repo, "small.py", numbered("small_%d = %d\n", SmallLines-1)+"small_10 = 11\n")
	testenv.Git(t, repo, "add", "src/helper.py", "small.py")
}

// StageGutBig stages big.py cut down to 10 of its 200 lines.
func StageGutBig(t testing.TB, repo string) {
	write(t, repo, "big.py", numbered("value_%d = %d\n", 10))
	testenv.Git(t, repo, "add", "big.py")
}

// StageGutState stages src/state.py cut down to 5 lines.
func StageGutState(t testing.TB, repo string) {
	GutStateUnstaged(t, repo)
	testenv.Git(t, repo, "add", "src/state.py")
}

// GutStateUnstaged cuts src/state.py down to 5 lines without staging it.
func GutStateUnstaged(t testing.TB, repo string) {
	write(t, repo, "src/state.py", numbered("state_%d = %d\n", 5))
}

// DeleteBigUnstaged deletes big.py from the working tree only.
func DeleteBigUnstaged(t testing.TB, repo string) {
	if err := os.Remove(filepath.Join(repo, "big.py")); err != nil {
		t.Fatal(err)
	}
}

// CommitGutState commits src/state.py cut down to 5 lines, so that
// amending HEAD takes that loss.
func CommitGutState(t testing.TB, repo string) {
	StageGutState(t, repo)
	testenv.Git(t, repo, "commit", "-q", "-m", "shrink state")
}

// AddNotebooks commits the notebooks (analysis.ipynb, legacy.ipynb) and
// broken.ipynb, analysis.ipynb cut short as by an interrupted save.
func AddNotebooks(t testing.TB, repo string) {
	t.Helper()
	for _, name := range []string{"analysis.ipynb", "legacy.ipynb"} {
		data, err := notebooks.ReadFile("testdata/notebooks/" + name)
		if err != nil {
			t.Fatal(err)
		}
		write(t, repo, name, string(data))
		if name == "analysis.ipynb" {
			write(t, repo, "broken.ipynb", string(data[:len(data)/2]))
		}
	}
	testenv.Git(t, repo, "add", "analysis.ipynb", "legacy.ipynb", "broken.ipynb")
	testenv.Git(t, repo, "commit", "-q", "-m", "notebooks")
}

// Notebook returns one of the notebooks AddNotebooks commits.
func Notebook(t testing.TB, name string) []byte {
	t.Helper()
	data, err := notebooks.ReadFile("testdata/notebooks/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Answer is the decision printed by the hook.
type Answer struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// Check verifies the hook's stdout for a case (not ExitBlock cases).
func Check(t testing.TB, c Case, stdout string) {
	t.Helper()
	if c.Decision == "" {
		if stdout != "" {
			t.Errorf("%s: want no opinion (nothing printed), got %s", c.Fixture, stdout)
		}
		return
	}
	if strings.Count(strings.TrimSpace(stdout), "\n") != 0 {
		t.Errorf("%s: the decision is not one line: %q", c.Fixture, stdout)
	}
	var a Answer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("%s: stdout is not the decision JSON: %v\n%s", c.Fixture, err, stdout)
	}
	h := a.HookSpecificOutput
	if h.HookEventName != "PreToolUse" {
		t.Errorf("%s: hookEventName = %q", c.Fixture, h.HookEventName)
	}
	if h.PermissionDecision != c.Decision {
		t.Errorf("%s: decision = %q, want %q (reason: %s)", c.Fixture, h.PermissionDecision, c.Decision, h.PermissionDecisionReason)
	}
	for _, want := range c.Reason {
		if !strings.Contains(h.PermissionDecisionReason, want) {
			t.Errorf("%s: reason lacks %q:\n%s", c.Fixture, want, h.PermissionDecisionReason)
		}
	}
}
