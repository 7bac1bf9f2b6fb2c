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
		{Fixture: "write_replace_large.json", Decision: "ask", Reason: []string{"src/state.py (270 lines) with 56 lines", "270 lines would be deleted", "more than 100 lines"}},
		{Fixture: "write_outside_root.json", Decision: "deny", Reason: []string{"outside the project root"}},
		{Fixture: "write_through_symlink.json", Decision: "deny", Reason: []string{"through a symlink", "outside the project root"}},
		{Fixture: "write_into_git.json", Decision: "deny", Reason: []string{".git"}},
		{Fixture: "write_missing_content.json", Decision: "deny", Reason: []string{"no content"}},
		{Fixture: "write_cwd_not_a_repository.json", Decision: "deny", Reason: []string{"not inside a git work tree", "no project root"}},
		{Fixture: "write_cwd_inside_git_dir.json", Decision: "deny", Reason: []string{"not inside a git work tree"}},
		{Fixture: "edit_small_change.json", Decision: "allow", Reason: []string{"big.py -1 +1 of 200 lines"}},
		{Fixture: "edit_old_string_missing.json", Decision: "deny", Reason: []string{"old_string does not occur", "read the file again"}},
		{Fixture: "edit_ambiguous.json", Decision: "deny", Reason: []string{"occurs 200 times", "replace_all"}},
		{Fixture: "edit_guts_large.json", Decision: "ask", Reason: []string{"deletes 150 of the 200 lines of big.py", "more than half"}},
		{Fixture: "edit_settings.json", Decision: "ask", Reason: []string{".claude/settings.json configures Claude Code's hooks"}},
		{Fixture: "multiedit_ok.json", Decision: "allow", Reason: []string{"big.py -2 +3 of 200 lines"}},
		{Fixture: "multiedit_guts.json", Decision: "ask", Reason: []string{"deletes 120 of the 200 lines of big.py"}},
		{Fixture: "multiedit_second_missing.json", Decision: "deny", Reason: []string{"edit 2 of 2", "does not occur"}},
		{Fixture: "notebook_outside.json", Decision: "deny", Reason: []string{"outside the project root"}},
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
