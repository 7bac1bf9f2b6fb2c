package gitx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// File modes git reports in raw diff output.
const (
	ModeGitlink = 0o160000 // a submodule commit
	ModeSymlink = 0o120000
)

// Change is one record of `git diff --raw -z` output: one path whose
// content, mode or name differs between the two sides.
type Change struct {
	OldMode, NewMode uint32 // 0 for an absent side
	// OldID and NewID are object ids, all zeros for an absent side or an
	// unhashed work-tree file. A work-tree file's id may name an object
	// git hashed but never stored (it hashes a file to pair it with the
	// source of a rename): read a work-tree side from disk.
	OldID, NewID string
	Status       byte   // 'A', 'C', 'D', 'M', 'R', 'T', 'U' or 'X'
	Score        int    // similarity percentage of a rename or copy
	OldPath      string // the source of a rename or copy, else ""
	Path         string
}

// NumStat is one record of `git diff --numstat -z` output.
type NumStat struct {
	Added, Deleted int
	Binary         bool   // git printed "-" for both counts
	OldPath        string // the source of a rename or copy, else ""
	Path           string
}

// MalformedError reports output that is not what git prints.
type MalformedError struct {
	Offset int64 // bytes read when the problem was seen
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed git output at byte %d: %s", e.Offset, e.Reason)
}

// zReader reads NUL-terminated fields and counts the bytes consumed.
type zReader struct {
	br  *bufio.Reader
	off int64
}

func (z *zReader) field() (string, error) {
	s, err := z.br.ReadString(0)
	z.off += int64(len(s))
	if err != nil {
		if errors.Is(err, io.EOF) {
			if s == "" {
				return "", io.EOF
			}
			return "", &MalformedError{z.off, "output ends inside a field"}
		}
		return "", err
	}
	return s[:len(s)-1], nil
}

// path reads a path field: the end of output or an empty name is
// malformed.
func (z *zReader) path(what string) (string, error) {
	s, err := z.field()
	switch {
	case errors.Is(err, io.EOF):
		return "", &MalformedError{z.off, "output ends before the " + what}
	case err == nil && s == "":
		return "", &MalformedError{z.off, "empty " + what}
	}
	return s, err
}

func (z *zReader) malformed(format string, args ...any) error {
	return &MalformedError{z.off, fmt.Sprintf(format, args...)}
}

// ParseDiffZ reads the output of `git diff --raw --numstat -z` (either
// section may be absent) and calls onChange for every raw record and
// onStat for every numstat record, in the order git printed them. Either
// callback may be nil. A callback's error stops parsing and is returned.
func ParseDiffZ(r io.Reader, onChange func(Change) error, onStat func(NumStat) error) error {
	z := &zReader{br: bufio.NewReaderSize(r, 64<<10)}
	for {
		head, err := z.field()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.HasPrefix(head, ":") {
			c, err := z.change(head)
			if err != nil {
				return err
			}
			if onChange != nil {
				if err := onChange(c); err != nil {
					return err
				}
			}
			continue
		}
		s, err := z.numstat(head)
		if err != nil {
			return err
		}
		if onStat != nil {
			if err := onStat(s); err != nil {
				return err
			}
		}
	}
}

// change parses ":<mode> <mode> <id> <id> <status>[score]" and the paths
// that follow it.
func (z *zReader) change(head string) (Change, error) {
	var c Change
	parts := strings.Split(head[1:], " ")
	if len(parts) != 5 {
		return c, z.malformed("raw record %q does not have 5 fields", head)
	}
	for i, p := range parts[:2] {
		m, err := strconv.ParseUint(p, 8, 32)
		if err != nil || len(p) != 6 {
			return c, z.malformed("raw record %q: bad mode %q", head, p)
		}
		if i == 0 {
			c.OldMode = uint32(m)
		} else {
			c.NewMode = uint32(m)
		}
	}
	c.OldID, c.NewID = parts[2], parts[3]
	for _, id := range parts[2:4] {
		if !isHex(id) {
			return c, z.malformed("raw record %q: bad object id %q", head, id)
		}
	}
	st := parts[4]
	if st == "" {
		return c, z.malformed("raw record %q has no status", head)
	}
	c.Status = st[0]
	switch c.Status {
	case 'R', 'C':
		n, err := strconv.Atoi(st[1:])
		if err != nil || n < 0 || n > 100 || st[1] == '+' || st[1] == '-' {
			return c, z.malformed("raw record %q: bad similarity score", head)
		}
		c.Score = n
		if c.OldPath, err = z.path("rename source"); err != nil {
			return c, err
		}
	case 'A', 'D', 'M', 'T', 'U', 'X':
		if len(st) != 1 {
			return c, z.malformed("raw record %q: bad status %q", head, st)
		}
	default:
		return c, z.malformed("raw record %q: unknown status %q", head, st)
	}
	var err error
	if c.Path, err = z.path("path"); err != nil {
		return c, err
	}
	return c, nil
}

// numstat parses "<added>\t<deleted>\t<path>" or, for a rename or copy,
// "<added>\t<deleted>\t" followed by the two paths as fields of their own.
func (z *zReader) numstat(head string) (NumStat, error) {
	var s NumStat
	added, rest, ok1 := strings.Cut(head, "\t")
	deleted, path, ok2 := strings.Cut(rest, "\t")
	if !ok1 || !ok2 {
		return s, z.malformed("numstat record %q lacks its tabs", head)
	}
	switch {
	case added == "-" && deleted == "-":
		s.Binary = true
	default:
		var err1, err2 error
		s.Added, err1 = parseCount(added)
		s.Deleted, err2 = parseCount(deleted)
		if err1 != nil || err2 != nil {
			return s, z.malformed("numstat record %q: bad line counts", head)
		}
	}
	if path != "" {
		s.Path = path
		return s, nil
	}
	var err error
	if s.OldPath, err = z.path("rename source"); err != nil {
		return s, err
	}
	if s.Path, err = z.path("rename target"); err != nil {
		return s, err
	}
	return s, nil
}

func parseCount(s string) (int, error) {
	if !canonicalDecimal(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}

func isHex(s string) bool {
	if len(s) < 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SplitZ splits NUL-terminated output (ls-files -z, for one) into its
// fields. A final field without its NUL is malformed.
func SplitZ(out []byte) ([]string, error) {
	if len(out) == 0 {
		return nil, nil
	}
	if out[len(out)-1] != 0 {
		return nil, &MalformedError{int64(len(out)), "output does not end with NUL"}
	}
	return strings.Split(string(out[:len(out)-1]), "\x00"), nil
}
