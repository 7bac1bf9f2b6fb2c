package agenthook

import (
	"encoding/json"
	"strings"
	"testing"
)

const cmdNow = "'/opt/azero/bin/azero' hook claude-code"

// preToolUse decodes the settings' PreToolUse groups.
func preToolUse(t *testing.T, settings []byte) []map[string]any {
	t.Helper()
	var doc struct {
		Hooks struct {
			PreToolUse []map[string]any `json:"PreToolUse"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil {
		t.Fatalf("settings are not valid JSON: %v\n%s", err, settings)
	}
	return doc.Hooks.PreToolUse
}

// azeroHooks counts the hooks running azero in the settings.
func azeroHooks(t *testing.T, settings []byte) int {
	t.Helper()
	n := 0
	for _, g := range preToolUse(t, settings) {
		hooks, _ := g["hooks"].([]any)
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			if cmd, _ := m["command"].(string); isAzeroHook(cmd) {
				n++
				if m["onFailure"] != "block" || m["type"] != "command" || g["matcher"] != Matcher {
					t.Errorf("azero hook %v in group %v is not the installed shape", m, g["matcher"])
				}
			}
		}
	}
	return n
}

func TestMergeSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing string
		changed  bool
		keep     []string // substrings that must survive
		groups   int      // PreToolUse groups after
	}{
		{"no file", "", true, nil, 1},
		{"empty object", "{}", true, nil, 1},
		{"other settings kept in order", `{"model": "opus", "permissions": {"allow": ["Bash(npm test)"]}, "env": {"A": "1"}}`, true,
			[]string{`"model": "opus"`, `"Bash(npm test)"`, `"A": "1"`}, 1},
		{"other hooks kept", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
			"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier"}]}]}}`, true,
			[]string{"./lint.sh", "prettier", "PostToolUse"}, 2},
		{"old azero path replaced", `{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "/old/azero hook claude-code"}]}]}}`, true,
			nil, 1},
		{"azero beside a user hook in one group", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}, {"type": "command", "command": "azero hook claude-code"}]}]}}`, true,
			[]string{"./lint.sh"}, 2},
		{"already installed", `{"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash", "hooks": [{"type": "command", "command": "'/opt/azero/bin/azero' hook claude-code", "onFailure": "block"}]}]}}`, false,
			nil, 1},
		{"null hooks", `{"hooks": null}`, true, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, changed, err := MergeSettings([]byte(tc.existing), cmdNow)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if n := azeroHooks(t, out); n != 1 {
				t.Errorf("%d azero hooks, want exactly 1:\n%s", n, out)
			}
			if g := len(preToolUse(t, out)); g != tc.groups {
				t.Errorf("%d PreToolUse groups, want %d:\n%s", g, tc.groups, out)
			}
			for _, k := range tc.keep {
				if !strings.Contains(string(out), k) {
					t.Errorf("lost %q:\n%s", k, out)
				}
			}
			again, changed2, err := MergeSettings(out, cmdNow)
			if err != nil || changed2 || string(again) != string(out) {
				t.Errorf("second install changed the file (changed=%v err=%v):\n%s\n---\n%s", changed2, err, out, again)
			}
		})
	}
}

func TestMergeSettingsKeepsKeyOrder(t *testing.T) {
	t.Parallel()
	out, _, err := MergeSettings([]byte(`{"zeta": 1, "alpha": 2, "hooks": {"Stop": []}, "mid": 3}`), cmdNow)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !(strings.Index(s, "zeta") < strings.Index(s, "alpha") && strings.Index(s, "alpha") < strings.Index(s, `"hooks"`) &&
		strings.Index(s, `"hooks"`) < strings.Index(s, "mid") && strings.Index(s, "Stop") < strings.Index(s, "PreToolUse")) {
		t.Errorf("key order changed:\n%s", s)
	}
	if !strings.HasSuffix(s, "}\n") || !strings.Contains(s, "\n  \"zeta\": 1") {
		t.Errorf("not indented with two spaces and a final newline:\n%s", s)
	}
}

func TestMergeSettingsRefusesBrokenFiles(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`{`, `[]`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`, `{"a":1,"a":2}`, `{} {}`, `"x"`} {
		if _, _, err := MergeSettings([]byte(bad), cmdNow); err == nil {
			t.Errorf("MergeSettings(%s) succeeded, want an error", bad)
		}
	}
}

func TestKeepsOtherSettings(t *testing.T) {
	t.Parallel()
	azero := `{"type":"command","command":"azero hook claude-code","onFailure":"block"}`
	other := `{"type":"command","command":"./lint"}`
	cases := []struct {
		name             string
		existing, merged string
		want             bool
	}{
		{"hook added to nothing", ``, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + azero + `]}]}}`, true},
		{"hook added beside others", `{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + other + `]}]}}`,
			`{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + other + `]},{"matcher":"Write","hooks":[` + azero + `]}]}}`, true},
		{"older azero hook moved out of a shared group", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + other + `,{"command":"/old/azero hook claude-code"}]}]}}`,
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + other + `]},{"matcher":"Write","hooks":[` + azero + `]}]}}`, true},
		{"null hooks", `{"hooks":null}`, `{"hooks":{"PreToolUse":[{"hooks":[` + azero + `]}]}}`, true},
		{"a setting dropped", `{"model":"opus","env":{"A":"1"}}`, `{"model":"opus","hooks":{"PreToolUse":[{"hooks":[` + azero + `]}]}}`, false},
		{"a setting changed", `{"model":"opus"}`, `{"model":"sonnet","hooks":{"PreToolUse":[{"hooks":[` + azero + `]}]}}`, false},
		{"another hook dropped", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + other + `]}]}}`, `{"hooks":{"PreToolUse":[{"hooks":[` + azero + `]}]}}`, false},
		{"another event's hooks dropped", `{"hooks":{"Stop":[{"hooks":[` + other + `]}]}}`, `{"hooks":{"PreToolUse":[{"hooks":[` + azero + `]}]}}`, false},
		{"numbers kept exactly", `{"cleanupPeriodDays":30.0}`, `{"cleanupPeriodDays":30}`, false},
		{"not JSON", `{"model":`, `{}`, false},
		{"not an object", `[]`, `{}`, false},
	}
	for _, tc := range cases {
		if got := KeepsOtherSettings([]byte(tc.existing), []byte(tc.merged)); got != tc.want {
			t.Errorf("%s: KeepsOtherSettings = %v, want %v", tc.name, got, tc.want)
		}
	}
}
