package agenthook

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// StringEdit is one of Claude Code's string edits: replace OldString by
// NewString, once (it must then occur exactly once) or everywhere.
type StringEdit struct {
	OldString  string
	NewString  string
	ReplaceAll bool
}

// EditError says why an edit cannot be applied the way Claude Code would
// apply it. Its text is written for the model.
type EditError struct {
	Edit   int // 1-based, in the MultiEdit's list
	Of     int // how many edits the call holds
	Reason string
}

func (e *EditError) Error() string {
	if e.Of > 1 {
		return fmt.Sprintf("edit %d of %d: %s", e.Edit, e.Of, e.Reason)
	}
	return e.Reason
}

// ApplyEdits computes what Claude Code's Edit and MultiEdit tools would
// make of a file: edits apply in order, each to the result of the ones
// before it. exists says whether the file exists. Like Claude Code it
//   - creates a missing (or empty) file from a first edit with an empty
//     old_string, and refuses an empty old_string otherwise;
//   - finds old_string exactly, or else with curly quotes read as straight
//     ones (the model often types the other kind);
//   - matches a CRLF file's lines with LF in old_string and keeps CRLF;
//   - refuses an old_string that is missing, or that occurs more than once
//     without replace_all.
//
// ApplyEdits is pure; it never touches the disk.
func ApplyEdits(content string, exists bool, edits []StringEdit) (string, error) {
	if len(edits) == 0 {
		return content, &EditError{Edit: 1, Of: 1, Reason: "the call holds no edits"}
	}
	crlf := strings.Contains(content, "\r\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	for i, e := range edits {
		fail := func(format string, args ...any) (string, error) {
			return "", &EditError{Edit: i + 1, Of: len(edits), Reason: fmt.Sprintf(format, args...)}
		}
		oldS, newS := e.OldString, e.NewString
		if crlf {
			oldS, newS = strings.ReplaceAll(oldS, "\r\n", "\n"), strings.ReplaceAll(newS, "\r\n", "\n")
		}
		if oldS == "" {
			if i == 0 && (!exists || content == "") {
				content, exists = newS, true
				continue
			}
			return fail("old_string is empty, but the file already has content: an empty old_string only creates a new file; copy the lines to replace into old_string")
		}
		if !exists {
			return fail("the file does not exist, so there is nothing to replace: create it with Write, or with an empty old_string")
		}
		actual, ok := findActual(content, oldS)
		if !ok {
			return fail("old_string does not occur in the file, so azero cannot tell what this edit would do: read the file again and copy old_string exactly from it (whitespace and indentation included)")
		}
		n := strings.Count(content, actual)
		switch {
		case e.ReplaceAll:
			content = strings.ReplaceAll(content, actual, newS)
		case n > 1:
			return fail("old_string occurs %d times in the file, so the place to change is unclear: add surrounding lines to old_string until it is unique, or set replace_all to change every occurrence", n)
		default:
			content = strings.Replace(content, actual, newS, 1)
		}
	}
	if crlf {
		content = strings.ReplaceAll(content, "\n", "\r\n")
	}
	return content, nil
}

// findActual returns the text of content that old stands for: old itself
// when it occurs, else the first text that equals it once curly quotes are
// read as straight ones.
func findActual(content, old string) (string, bool) {
	if strings.Contains(content, old) {
		return old, true
	}
	normContent, offsets := normalizeQuotes(content)
	normOld, _ := normalizeQuotes(old)
	i := strings.Index(normContent, normOld)
	if i < 0 {
		return "", false
	}
	return content[offsets[i]:offsets[i+len(normOld)]], true
}

// normalizeQuotes replaces curly quotes with straight ones. offsets maps
// each byte of the result (and its end) to the byte of s it came from.
func normalizeQuotes(s string) (string, []int) {
	var b strings.Builder
	offsets := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\u2018', '\u2019':
			b.WriteByte('\'')
			offsets = append(offsets, i)
		case '\u201c', '\u201d':
			b.WriteByte('"')
			offsets = append(offsets, i)
		default:
			b.WriteString(s[i : i+size])
			for k := 0; k < size; k++ {
				offsets = append(offsets, i+k)
			}
		}
		i += size
	}
	offsets = append(offsets, len(s))
	return b.String(), offsets
}
