package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

// snakeKey is a key of azero's JSON vocabulary: lower snake_case.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// statusWord is a status or outcome: a lowercase word, or words joined by
// underscores ("no_change"). The diff review's decisions keep the
// specification's uppercase and are not statuses.
var statusWord = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// dataMaps are the objects whose keys are data (paths, names a user
// chose, a state document's own fields), not azero's vocabulary.
var dataMaps = map[string]bool{"facts": true, "data": true, "meta": true, "state": true, "settings": true, "env": true}

// vocabularyProblems walks one JSON document and says each place where it
// leaves azero's vocabulary (README, "JSON output"): snake_case keys,
// times as RFC 3339 strings under *_at, durations as whole milliseconds
// under *_ms, and no other units.
func vocabularyProblems(doc any) []string {
	var problems []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := path + "." + k
				if !snakeKey.MatchString(k) {
					problems = append(problems, "key "+p+" is not snake_case")
				}
				switch {
				case strings.HasSuffix(k, "_at"):
					s, ok := x.(string)
					if _, err := time.Parse(time.RFC3339Nano, s); x != nil && (!ok || err != nil) {
						problems = append(problems, fmt.Sprintf("%s = %v is not an RFC 3339 time", p, x))
					}
				case strings.HasSuffix(k, "_ms"):
					if n, ok := x.(float64); !ok || n != float64(int64(n)) || n < 0 {
						problems = append(problems, fmt.Sprintf("%s = %v is not whole milliseconds", p, x))
					}
				case k == "status" || strings.HasSuffix(k, "_status") || k == "outcome" || k == "result" && isString(x):
					if str, ok := x.(string); x != nil && (!ok || !statusWord.MatchString(str)) {
						problems = append(problems, fmt.Sprintf("%s = %v is not a lowercase status word", p, x))
					}
				case strings.HasSuffix(k, "_ns"), strings.HasSuffix(k, "_seconds"), strings.HasSuffix(k, "_secs"),
					k == "at", k == "time", k == "duration", k == "elapsed", k == "latency":
					problems = append(problems, "key "+p+": times end in _at, durations in _ms")
				}
				if !dataMaps[k] {
					walk(p, x)
				}
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", doc)
	return problems
}

func isString(v any) bool { _, ok := v.(string); return ok }

// TestJSONVocabulary runs each command that has --json on a real run and
// repository and checks every document it prints against the vocabulary.
func TestJSONVocabulary(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	docs := map[string]string{}
	record := func(name string, r runResult, codes ...int) {
		t.Helper()
		ok := false
		for _, c := range codes {
			ok = ok || r.code == c
		}
		if !ok {
			t.Fatalf("%s: exit %d, want %v\nstdout %s\nstderr %s", name, r.code, codes, r.stdout, r.stderr)
		}
		docs[name] = r.stdout
	}

	// A run that waits at its diff review: steps, calls, a question.
	demo := runAzeroIn(t, state, base, nil, "demo", "--dir", base, "--json")
	record("demo", demo, ExitNeedsHuman)
	var d struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(demo.stdout), &d); err != nil || d.RunID == "" {
		t.Fatalf("demo: %v\n%s", err, demo.stdout)
	}
	record("runs", runAzeroIn(t, state, base, nil, "runs", "--json"), ExitOK)
	record("runs show", runAzeroIn(t, state, base, nil, "runs", "show", d.RunID, "--json"), ExitOK)
	record("runs show --events", runAzeroIn(t, state, base, nil, "runs", "show", d.RunID, "--json", "--events"), ExitOK)
	record("runs gc --dry-run", runAzeroIn(t, state, base, nil, "runs", "gc", "--dry-run", "--json"), ExitOK)
	record("resume", runAzeroIn(t, state, base, nil, "resume", d.RunID, "--json"), ExitNeedsHuman)
	record("selftest", runAzeroIn(t, state, base, nil, "selftest", "--dir", t.TempDir(), "--steps", "1", "--delay", "1ms", "--json"), ExitNeedsHuman)
	record("models ping", runAzeroIn(t, state, base, []string{"AZERO_MOCK_LLM=1"}, "models", "ping", "drafter", "--json"), ExitOK)
	issueRepo := testenv.NewRepo(t, map[string]string{"brief.md": "Add a --budget flag that stops a run before it costs too much.\n"})
	record("issue", runAzeroIn(t, state, issueRepo, []string{"AZERO_MOCK_LLM=1"}, "issue", "--brief", "brief.md", "--json"), ExitNeedsHuman)
	record("version", runAzeroIn(t, state, base, nil, "version", "--json"), ExitOK)
	record("models", runAzeroIn(t, state, base, nil, "models", "--json"), ExitOK)

	// The file capabilities on a repository of their own.
	repo := testenv.NewRepo(t, map[string]string{"mod.py": "def f():\n    return 1\n"})
	content := "def f():\n    return 2\n"
	record("write", runAzeroInput(t, state, repo, nil, &content, "write", "mod.py", "--content", "-", "--json"), ExitOK)
	if err := os.WriteFile(filepath.Join(repo, "edits.txt"),
		[]byte("<<<<<<< SEARCH\n    return 2\n=======\n    return 3\n>>>>>>> REPLACE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record("apply", runAzeroIn(t, state, repo, nil, "apply", "mod.py", "--edits", "edits.txt", "--json"), ExitOK)
	record("gate", runAzeroIn(t, state, repo, nil, "gate", "--json", "--repo", repo), ExitOK, ExitNeedsHuman, 1)
	// An error is a document too.
	record("error", runAzeroIn(t, state, base, nil, "runs", "show", "nosuch", "--json"), 1, ExitUsage)

	// The line counts have the same names in each document that has them.
	for _, name := range []string{"write", "apply", "gate"} {
		for _, key := range []string{`"original_lines"`, `"lines_after"`, `"lines_added"`, `"lines_deleted"`} {
			if !strings.Contains(docs[name], key) {
				t.Errorf("%s: no %s\n%s", name, key, docs[name])
			}
		}
	}
	for name, out := range docs {
		var doc any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%s: not one JSON document: %v\n%s", name, err, out)
			continue
		}
		for _, p := range vocabularyProblems(doc) {
			t.Errorf("%s: %s\n%s", name, p, out)
		}
	}
	// The walk can fail: a document from before the vocabulary.
	for _, bad := range []string{`{"Seconds":1}`, `{"duration_ns":5}`, `{"created_at":"yesterday"}`, `{"elapsed_ms":1.5}`,
		`{"status":"Done"}`, `{"runs":[{"status":"NOT_REQUIRED"}]}`, `{"outcome":"pass ed"}`} {
		var doc any
		_ = json.Unmarshal([]byte(bad), &doc)
		if len(vocabularyProblems(doc)) == 0 {
			t.Errorf("%s passed the vocabulary check", bad)
		}
	}
}
