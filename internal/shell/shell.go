// Package shell writes command lines people copy into a POSIX shell.
package shell

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Quote quotes a word (a path, a branch) for a POSIX shell command line the reader can
// copy: as it is when safe, in single quotes when printable, else in
// bash's $'...' form with escapes.
func Quote(p string) string {
	safe := p != ""
	printable := true
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./@%+=:,-", r)) {
			safe = false
		}
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			printable = false
		}
	}
	switch {
	case safe && !strings.HasPrefix(p, "-"):
		return p
	case printable:
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size <= 1, !strconv.IsPrint(r):
			for _, c := range []byte(p[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteString("'")
	return b.String()
}

// QuotePOSIX quotes s for a POSIX sh script (a hook): always in single
// quotes, which hold any byte but the quote itself. Quote is for command
// lines shown to people; this one is for files sh runs.
func QuotePOSIX(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
