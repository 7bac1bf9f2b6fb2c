package mcpserver

import "testing"

func TestTypedAnswer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		content map[string]any
		want    string
	}{
		{"the form's field", map[string]any{"answer": "approve"}, "approve"},
		{"the form's field among others", map[string]any{"answer": "no", "confirm": "approve"}, "no"},
		{"one field named otherwise", map[string]any{"confirm": "approve"}, "approve"},
		{"several fields named otherwise", map[string]any{"a": "approve", "b": "approve"}, ""},
		{"not text", map[string]any{"answer": true}, ""},
		{"one field, not text", map[string]any{"ok": true}, ""},
		{"empty", map[string]any{}, ""},
		{"nil", nil, ""},
	}
	for _, tc := range cases {
		if got := typedAnswer(tc.content); got != tc.want {
			t.Errorf("%s: typedAnswer(%v) = %q, want %q", tc.name, tc.content, got, tc.want)
		}
	}
}
