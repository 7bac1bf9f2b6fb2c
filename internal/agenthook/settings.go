package agenthook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Matcher is the tools azero's hook is registered for.
const Matcher = "Write|Edit|MultiEdit|NotebookEdit|Bash"

// hookArgs is what follows azero's executable in the hook's command.
const hookArgs = "hook claude-code"

// HookCommand is the shell command Claude Code runs for the hook, given
// how to start azero (a quoted path, or "azero" when it is on PATH).
func HookCommand(azero string) string { return azero + " " + hookArgs }

// isAzeroHook reports whether a hook command runs azero's Claude Code
// hook (whatever path it starts azero by).
func isAzeroHook(command string) bool {
	f := strings.Fields(command)
	return len(f) >= 3 && strings.Join(f[len(f)-2:], " ") == hookArgs
}

// desiredGroup is the PreToolUse entry azero installs. onFailure "block"
// makes Claude Code block the tool call when the hook cannot run at all
// (azero missing, killed): the hook fails closed even then.
func desiredGroup(command string) json.RawMessage {
	type hook struct {
		Type      string `json:"type"`
		Command   string `json:"command"`
		OnFailure string `json:"onFailure"`
	}
	g := struct {
		Matcher string `json:"matcher"`
		Hooks   []hook `json:"hooks"`
	}{Matcher, []hook{{"command", command, "block"}}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		panic(err) // plain strings always encode
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

// MergeSettings returns a Claude Code settings file with azero's
// PreToolUse hook in it, and whether that changed anything. Every other
// setting and hook is kept, in its order; an azero hook elsewhere (another
// matcher, an older path) is replaced by the one wanted, so installing
// twice changes nothing. existing may be empty (no file yet).
func MergeSettings(existing []byte, command string) ([]byte, bool, error) {
	if !isAzeroHook(command) {
		return nil, false, fmt.Errorf("%q does not run azero's hook", command)
	}
	if !utf8.ValidString(command) {
		return nil, false, fmt.Errorf("the hook command %q is not valid UTF-8, which a settings file cannot hold: install azero under a path in UTF-8", command)
	}
	if len(bytes.TrimSpace(existing)) == 0 {
		existing = []byte("{}")
	}
	top, err := parseObject(existing)
	if err != nil {
		return nil, false, fmt.Errorf("the settings file is not a JSON object (%w): fix it, then install again", err)
	}
	want := desiredGroup(command)

	hooks, err := top.object("hooks")
	if err != nil {
		return nil, false, err
	}
	var groups []json.RawMessage
	if raw, ok := hooks.get("PreToolUse"); ok {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, false, fmt.Errorf("hooks.PreToolUse in the settings file is not a list: %w", err)
		}
	}
	present, others := false, false
	var kept []json.RawMessage
	for i, g := range groups {
		if sameJSON(g, want) && !present {
			present = true
			kept = append(kept, g)
			continue
		}
		stripped, removed, err := withoutAzeroHooks(g)
		if err != nil {
			return nil, false, fmt.Errorf("hooks.PreToolUse[%d]: %w", i, err)
		}
		if removed {
			others = true
			if stripped == nil {
				continue
			}
		}
		kept = append(kept, stripped)
	}
	if present && !others {
		return existing, false, nil
	}
	if !present {
		kept = append(kept, want)
	}
	hooks.set("PreToolUse", rawList(kept))
	top.set("hooks", hooks.render())
	out, err := indent(top.render())
	return out, true, err
}

// withoutAzeroHooks removes azero's hooks from one matcher group; stripped
// is nil when nothing else was in it.
func withoutAzeroHooks(g json.RawMessage) (stripped json.RawMessage, removed bool, err error) {
	obj, err := parseObject(g)
	if err != nil {
		return g, false, nil // not ours to judge: keep it as it is
	}
	raw, ok := obj.get("hooks")
	if !ok {
		return g, false, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return g, false, nil
	}
	var keep []json.RawMessage
	for _, h := range list {
		if azeroEntry(h) {
			removed = true
			continue
		}
		keep = append(keep, h)
	}
	if !removed {
		return g, false, nil
	}
	if len(keep) == 0 {
		return nil, true, nil
	}
	obj.set("hooks", rawList(keep))
	return obj.render(), true, nil
}

// azeroEntry reports whether one hook entry of a matcher group runs
// azero's hook.
func azeroEntry(h json.RawMessage) bool {
	var cmd struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(h, &cmd) == nil && isAzeroHook(cmd.Command)
}

// KeepsOtherSettings reports whether merged holds every setting of
// existing but azero's own hook: both are the same JSON once azero's hook
// entries, and the groups, lists and objects only they filled, are taken
// out. It is how --install knows its merge lost nothing, whatever the size
// of the file; any doubt (a file that is not an object) is false.
func KeepsOtherSettings(existing, merged []byte) bool {
	a, okA := withoutAzero(existing)
	b, okB := withoutAzero(merged)
	return okA && okB && reflect.DeepEqual(a, b)
}

// withoutAzero decodes a settings file without azero's hook entries.
func withoutAzero(data []byte) (map[string]any, bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, false
	}
	raw, present := top["hooks"]
	if present && raw == nil {
		delete(top, "hooks") // null is no hooks, as for MergeSettings
		return top, true
	}
	hooks, ok := raw.(map[string]any)
	if !ok {
		return top, true
	}
	groups, ok := hooks["PreToolUse"].([]any)
	if !ok {
		if v, present := hooks["PreToolUse"]; present && v == nil {
			delete(hooks, "PreToolUse")
		}
	} else {
		var kept []any
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			list, isList := gm["hooks"].([]any)
			if !ok || !isList {
				kept = append(kept, g)
				continue
			}
			var keep []any
			for _, h := range list {
				if enc, err := json.Marshal(h); err == nil && azeroEntry(enc) {
					continue
				}
				keep = append(keep, h)
			}
			switch {
			case len(keep) == len(list):
				kept = append(kept, g)
			case len(keep) > 0:
				gm["hooks"] = keep
				kept = append(kept, gm)
			}
		}
		if len(kept) == 0 {
			delete(hooks, "PreToolUse")
		} else {
			hooks["PreToolUse"] = kept
		}
	}
	if len(hooks) == 0 {
		delete(top, "hooks")
	}
	return top, true
}

// object is a JSON object that keeps its members' order and raw values.
type object struct {
	members []member
}

type member struct {
	key   string
	value json.RawMessage
}

func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("expected an object")
	}
	o := &object{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("expected a key")
		}
		if seen[key] {
			return nil, fmt.Errorf("the key %q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.members = append(o.members, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the object")
	}
	return o, nil
}

func (o *object) get(key string) (json.RawMessage, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

func (o *object) set(key string, v json.RawMessage) {
	for i, m := range o.members {
		if m.key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

// object returns the member key as an object (empty when absent).
func (o *object) object(key string) (*object, error) {
	raw, ok := o.get(key)
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return &object{}, nil
	}
	sub, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s in the settings file is not an object (%w): fix it, then install again", key, err)
	}
	return sub, nil
}

func (o *object) render() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indent formats JSON the way Claude Code writes its settings: two spaces,
// a final newline.
func indent(raw []byte) ([]byte, error) {
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// rawList renders values as a JSON list, as they are (json.Marshal would
// escape <, > and & in them).
func rawList(values []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// sameJSON reports whether a and b hold the same JSON value, whatever
// their spacing and escapes.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
