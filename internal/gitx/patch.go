package gitx

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// cqEscape is git's table for C-style quoting of path names (quote.c,
// with core.quotePath=true): a letter escape, 'o' for an octal escape,
// 0 for a byte printed as it is.
var cqEscape = func() (t [256]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'o'
	}
	for c, e := range map[byte]byte{'\a': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\'} {
		t[c] = e
	}
	for c := 0x7f; c < 0x100; c++ {
		t[c] = 'o'
	}
	return t
}()

func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if cqEscape[s[i]] != 0 {
			return true
		}
	}
	return false
}

func appendQuotedBody(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch e := cqEscape[c]; e {
		case 0:
			b = append(b, c)
		case 'o':
			b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
		default:
			b = append(b, '\\', e)
		}
	}
	return b
}

// QuotePath quotes a path the way git prints it in patches and
// human-readable output with core.quotePath=true: unchanged when it needs
// no escaping, else in double quotes with C escapes (\n, \t, \", \\) and
// octal escapes for other control bytes and every byte from 0x7f up.
func QuotePath(p string) string {
	if !needsQuote(p) {
		return p
	}
	b := append([]byte{'"'}, appendQuotedBody(nil, p)...)
	return string(append(b, '"'))
}

// quoteTwo is git's quote_two: prefix and name quoted as one string.
func quoteTwo(prefix, name string) string {
	if !needsQuote(prefix) && !needsQuote(name) {
		return prefix + name
	}
	return QuotePath(prefix + name)
}

// UnquotePath reverses QuotePath: a string in double quotes is unescaped,
// anything else is returned as it is.
func UnquotePath(s string) (string, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s, nil
	}
	body := s[1 : len(s)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"':
			return "", errors.New("unescaped quote in quoted path " + strconv.Quote(s))
		case c != '\\':
			out = append(out, c)
			continue
		}
		i++
		if i == len(body) {
			return "", errors.New("quoted path ends with a backslash: " + strconv.Quote(s))
		}
		switch e := body[i]; e {
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case 'r':
			out = append(out, '\r')
		case '"', '\\':
			out = append(out, e)
		case '0', '1', '2', '3':
			if i+2 >= len(body) || !isOctal(body[i+1]) || !isOctal(body[i+2]) {
				return "", errors.New("bad octal escape in quoted path " + strconv.Quote(s))
			}
			out = append(out, (e-'0')<<6|(body[i+1]-'0')<<3|(body[i+2]-'0'))
			i += 2
		default:
			return "", errors.New("unknown escape in quoted path " + strconv.Quote(s))
		}
	}
	return string(out), nil
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// DiffHeader returns the first line of the patch git prints for a file
// (without its line feed) when run with --src-prefix=a/ --dst-prefix=b/
// and core.quotePath=true: "diff --git a/OLD b/NEW", each side quoted on
// its own when needed. Matching this exact line identifies a file's patch
// whatever its name, because quoting makes the line unambiguous.
func DiffHeader(oldPath, newPath string) string {
	return "diff --git " + quoteTwo("a/", oldPath) + " " + quoteTwo("b/", newPath)
}

// PatchArgs are the arguments that fix the patch format DiffHeader and
// ScanPatch rely on, whatever the user's configuration says (colour,
// prefixes, external diff drivers, text conversion).
var PatchArgs = []string{"--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"}

// ScanPatch reads the output of `git diff -p` line by line and calls fn
// with each line (line feed removed) and the header line ("diff --git
// ...") of the file patch it belongs to; lines outside any file patch
// (an unmerged-path notice) get an empty header. A header line is passed
// with itself as header. A line inside a patch can never be mistaken for
// a header: hunk lines all start with ' ', '+', '-', '\\' or "@@", and
// names in headers are quoted when they contain a line feed.
func ScanPatch(r io.Reader, fn func(header, line string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	header := ""
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			header = line
		case strings.HasPrefix(line, "* Unmerged path "):
			header = ""
		}
		if ferr := fn(header, line); ferr != nil {
			return ferr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
