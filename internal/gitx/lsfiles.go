package gitx

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Stage is one index entry of a path with a merge conflict, as `git
// ls-files --unmerged` prints it: stage 1 is the common ancestor's
// version, 2 ours, 3 theirs (a side that deleted the file has no entry).
type Stage struct {
	Mode  uint32
	ID    string
	Stage int // 1, 2 or 3
	Path  string
}

// parseStage parses one "<mode> <id> <stage>\t<path>" record, read up to
// off.
func parseStage(f string, off int64) (Stage, error) {
	head, path, ok := strings.Cut(f, "\t")
	parts := strings.Split(head, " ")
	if !ok || len(parts) != 3 || path == "" {
		return Stage{}, &MalformedError{off, fmt.Sprintf("unmerged entry %q is not <mode> <id> <stage>\\t<path>", f)}
	}
	mode, err := strconv.ParseUint(parts[0], 8, 32)
	if err != nil || len(parts[0]) != 6 {
		return Stage{}, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad mode", f)}
	}
	if !isHex(parts[1]) {
		return Stage{}, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad object id", f)}
	}
	if len(parts[2]) != 1 || parts[2][0] < '1' || parts[2][0] > '3' {
		return Stage{}, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad stage", f)}
	}
	return Stage{Mode: uint32(mode), ID: parts[1], Stage: int(parts[2][0] - '0'), Path: path}, nil
}

// Listing is what a commit of the working tree would take besides the
// changes to tracked files, and what stops it: the untracked, not-ignored
// paths (a nested repository as "dir/"), and the paths with unresolved
// merge conflicts, each once, in index order.
type Listing struct {
	Untracked []string
	Unmerged  []string
}

// ListUntrackedAndUnmerged lists both with one git process, `git ls-files
// -t -z --others --exclude-standard --unmerged`, whose tags ("? " and "M ")
// tell the two apart.
func (r Repo) ListUntrackedAndUnmerged(ctx context.Context) (Listing, error) {
	out, err := r.Run(ctx, "ls-files", "-t", "-z", "--others", "--exclude-standard", "--unmerged")
	if err != nil {
		return Listing{}, err
	}
	l, err := ParseListing(out)
	if err != nil {
		return Listing{}, fmt.Errorf("list untracked and unmerged paths: %w", err)
	}
	return l, nil
}

// ParseListing parses the output of `git ls-files -t -z --others
// --unmerged`: "? <path>" for an untracked path, "M <mode> <id>
// <stage>\t<path>" for each stage of a path with a merge conflict, each
// record ended by NUL.
func ParseListing(out []byte) (Listing, error) {
	fields, err := SplitZ(out)
	if err != nil {
		return Listing{}, err
	}
	var l Listing
	var off int64
	for _, f := range fields {
		off += int64(len(f)) + 1
		switch {
		case strings.HasPrefix(f, "? ") && len(f) > 2:
			l.Untracked = append(l.Untracked, f[2:])
		case strings.HasPrefix(f, "M "):
			st, err := parseStage(f[2:], off)
			if err != nil {
				return Listing{}, err
			}
			if n := len(l.Unmerged); n == 0 || l.Unmerged[n-1] != st.Path {
				l.Unmerged = append(l.Unmerged, st.Path)
			}
		default:
			return Listing{}, &MalformedError{off, fmt.Sprintf("ls-files record %q has no known tag", f)}
		}
	}
	return l, nil
}
