package gitx

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Object is the header git cat-file --batch prints for one requested id.
type Object struct {
	ID      string
	Type    string // blob, tree, commit or tag; "" when Missing
	Size    int64
	Missing bool // the id names no object (or is ambiguous)
}

// ParseBatchHeader parses one header line of `git cat-file --batch`
// ("<id> <type> <size>", "<id> missing" or "<id> ambiguous"), without its
// line feed.
func ParseBatchHeader(line string) (Object, error) {
	fields := strings.Split(line, " ")
	switch {
	case len(fields) == 2 && (fields[1] == "missing" || fields[1] == "ambiguous") && fields[0] != "":
		return Object{ID: fields[0], Missing: true}, nil
	case len(fields) == 3 && isHex(fields[0]) && fields[1] != "":
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || !canonicalDecimal(fields[2]) {
			return Object{}, &MalformedError{0, "cat-file header " + strconv.Quote(line) + ": bad size"}
		}
		return Object{ID: fields[0], Type: fields[1], Size: size}, nil
	}
	return Object{}, &MalformedError{0, "cat-file header " + strconv.Quote(line) + " is not <id> <type> <size>"}
}

// canonicalDecimal reports whether s is a number as git prints it: digits
// only, no sign, no leading zero.
func canonicalDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// CatFile streams objects through one `git cat-file --batch` process: every
// id received from ids is requested (ids are object ids, never paths, so
// no name can break the line-based protocol) and fn is called, in the same
// order, with the object's header and a reader of exactly its content. fn
// need not read all of it. CatFile returns when ids is closed and every
// object was handled, or at the first error; fn is never called after it
// returned an error.
func (r Repo) CatFile(ctx context.Context, ids <-chan string, fn func(Object, io.Reader) error) error {
	feed := func(ctx context.Context, w io.Writer) error {
		bw := bufio.NewWriter(w)
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case id, ok := <-ids:
				if !ok {
					return bw.Flush()
				}
				if strings.ContainsAny(id, "\n\x00") {
					return errors.New("object id contains a line break")
				}
				if _, err := bw.WriteString(id + "\n"); err != nil {
					return err
				}
				// Without anything more queued, hand what we have to git so
				// the reader is never starved while we wait.
				if len(ids) == 0 {
					if err := bw.Flush(); err != nil {
						return err
					}
				}
			}
		}
	}
	read := func(out io.Reader) error {
		br := bufio.NewReaderSize(out, 64<<10)
		var off int64
		for {
			line, err := br.ReadString('\n')
			off += int64(len(line))
			if errors.Is(err, io.EOF) && line == "" {
				return nil
			}
			if err != nil {
				return &MalformedError{off, "cat-file output ends inside a header"}
			}
			obj, err := ParseBatchHeader(strings.TrimSuffix(line, "\n"))
			if err != nil {
				return err
			}
			if obj.Missing {
				if err := fn(obj, strings.NewReader("")); err != nil {
					return err
				}
				continue
			}
			content := io.LimitReader(br, obj.Size)
			if err := fn(obj, content); err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, content); err != nil {
				return err
			}
			if b, err := br.ReadByte(); err != nil || b != '\n' {
				return &MalformedError{off + obj.Size, "cat-file content of " + obj.ID + " is shorter than its size"}
			}
			off += obj.Size + 1
		}
	}
	// --buffer: git's output is read concurrently, so it need not flush
	// after every object.
	return r.Stream(ctx, feed, read, "cat-file", "--batch", "--buffer")
}
