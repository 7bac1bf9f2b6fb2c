package agenthook

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func FuzzParsePayload(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/r/a","content":"x"}}`))
	f.Add([]byte(`{"tool_name":"Bash","tool_input":{"command":"git commit -am x"}}`))
	f.Add([]byte(`{"tool_name":"Edit","tool_input":{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}}`))
	f.Add([]byte(`{"tool_name":""}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"tool_name":"Write"} trailing`))
	f.Add([]byte("\xff\xfe{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(bytes.NewReader(data))
		if err != nil {
			return
		}
		if p.ToolName == "" {
			t.Fatal("accepted a payload without tool_name")
		}
		// What was accepted survives a round trip unchanged.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParsePayload(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !reflect.DeepEqual(normalizedPayload(p), normalizedPayload(q)) {
			t.Fatalf("round trip changed the payload:\n%+v\n%+v", p, q)
		}
		// Decoding any tool input never panics.
		var w WriteInput
		_ = p.toolInput(&w)
		var m MultiEditInput
		_ = p.toolInput(&m)
	})
}

func normalizedPayload(p Payload) Payload {
	var b bytes.Buffer
	if len(p.ToolInput) > 0 {
		_ = json.Compact(&b, p.ToolInput)
	}
	p.ToolInput = b.Bytes()
	if b.String() == "null" {
		p.ToolInput = nil
	}
	return p
}

func FuzzApplyEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", false)
	f.Add("x x x", "x", "y", true)
	f.Add("it\u2019s\r\n", "it's", "it is", false)
	f.Add("", "", "new", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		got, err := ApplyEdits(content, true, []StringEdit{{OldString: old, NewString: repl, ReplaceAll: all}})
		if err != nil {
			return
		}
		plain := !strings.ContainsAny(content+old+repl, "\r\u2018\u2019\u201c\u201d")
		if plain && old != "" && strings.Count(content, old) == 1 && !all {
			if want := strings.Replace(content, old, repl, 1); got != want {
				t.Fatalf("ApplyEdits(%q, %q -> %q) = %q, want %q", content, old, repl, got, want)
			}
		}
		if plain && old != "" && all {
			if want := strings.ReplaceAll(content, old, repl); got != want {
				t.Fatalf("replace_all gave %q, want %q", got, want)
			}
		}
	})
}

func FuzzMergeSettings(f *testing.F) {
	f.Add(`{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./a"}]}]}}`, "/usr/bin/azero")
	f.Add(``, "azero")
	f.Add(`{"hooks":{"PreToolUse":[{"hooks":[{"command":"x hook claude-code"}]}]}}`, "'/a b/azero'")
	f.Add(`{"hooks":null,"env":{"A":"1"}}`, "azero")
	f.Add(`{"hooks":{"PreToolUse":null,"Stop":[]}}`, "azero")
	f.Add(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"Command":"old/azero hook claude-code"},{"type":"command","command":"lint"}]},{"matcher":"x"}]}}`, "azero")
	f.Fuzz(func(t *testing.T, existing, exe string) {
		if exe == "" {
			return
		}
		cmd := HookCommand(exe)
		out, _, err := MergeSettings([]byte(existing), cmd)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON:\n%s", out)
		}
		if !KeepsOtherSettings([]byte(existing), out) {
			t.Fatalf("the merge lost a setting:\n%s\n%s", existing, out)
		}
		again, changed, err := MergeSettings(out, cmd)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent (changed=%v err=%v):\n%s\n%s", changed, err, out, again)
		}
		var doc struct {
			Hooks struct {
				PreToolUse []struct {
					Hooks []struct {
						Command string `json:"command"`
					} `json:"hooks"`
				} `json:"PreToolUse"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("result does not decode: %v", err)
		}
		n := 0
		for _, g := range doc.Hooks.PreToolUse {
			for _, h := range g.Hooks {
				if isAzeroHook(h.Command) {
					n++
					if h.Command != cmd {
						t.Fatalf("stale azero hook %q kept", h.Command)
					}
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d azero hooks:\n%s", n, out)
		}
	})
}

func FuzzApplyNotebookEdit(f *testing.F) {
	for _, name := range []string{"analysis.ipynb", "legacy.ipynb"} {
		doc, err := os.ReadFile(filepath.Join("hooktest", "testdata", "notebooks", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, "cell-1", "x\ny\n", "delete")
		f.Add(doc, "load", "rows = 1", "replace")
		f.Add(doc, "", "import os", "insert")
	}
	f.Add([]byte(`{"cells": [{"id": "a", "source": "x\r\ny"}, {"source": ["a\n", "b"]}]}`), "cell-1", "", "")
	f.Add([]byte(`{"cells": null}`), "a", "", "replace")
	f.Add([]byte(`{"cells": [{"id": "a", "source": {}}]}`), "a", "", "replace")
	f.Fuzz(func(t *testing.T, doc []byte, cellID, newSource, mode string) {
		ch, err := ApplyNotebookEdit(doc, NotebookEdit{CellID: cellID, NewSource: newSource, Mode: mode})
		if err != nil {
			var ne *NotebookError
			if !errors.As(err, &ne) || ne.Reason == "" {
				t.Fatalf("error %v is not a *NotebookError with a reason", err)
			}
			return
		}
		// An edit deletes only lines the notebook has, and adds at most
		// the new source's lines.
		if len(ch.DeletedLines) > ch.Lines || ch.Added > len(sourceLines(newSource)) || ch.Index < 0 || ch.Index > ch.Cells {
			t.Fatalf("change %+v for a notebook of %d lines and a new source of %d lines", ch, ch.Lines, len(sourceLines(newSource)))
		}
		if mode == NotebookInsert && len(ch.DeletedLines) != 0 {
			t.Fatalf("an insert deleted %q", ch.DeletedLines)
		}
		for _, l := range ch.DeletedLines {
			if strings.ContainsAny(l, "\n") {
				t.Fatalf("a deleted line holds a newline: %q", l)
			}
		}
	})
}

func FuzzQuoteDeletedDiff(f *testing.F) {
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n b\n", 1)
	f.Add("@@ -1 +1 @@\n-\x1b[31mred\r\n+x\n", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, diff string, total int) {
		lines := diffDeletions(diff)
		if len(lines) > strings.Count(diff, "\n")+1 {
			t.Fatalf("%d deletions from %d lines", len(lines), strings.Count(diff, "\n")+1)
		}
		q := quoteDeleted(lines, total)
		if total <= 0 && q != "" {
			t.Fatalf("quoted %q for %d deleted lines", q, total)
		}
		if n := strings.Count(q, "\n-"); n > quotedLines {
			t.Fatalf("%d lines quoted", n)
		}
		for _, r := range q {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f) {
				t.Fatalf("control character %q in the quote %q", r, q)
			}
		}
	})
}
