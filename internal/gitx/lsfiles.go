package gitx

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Stage is one index entry of a path with a merge conflict, as `git
// ls-files --unmerged -z` prints it: stage 1 is the common ancestor's
// version, 2 ours, 3 theirs (a side that deleted the file has no entry).
type Stage struct {
	Mode  uint32
	ID    string
	Stage int // 1, 2 or 3
	Path  string
}

// ParseUnmerged parses the output of `git ls-files --unmerged -z`:
// "<mode> <id> <stage>\t<path>" records, each ended by NUL.
func ParseUnmerged(out []byte) ([]Stage, error) {
	fields, err := SplitZ(out)
	if err != nil {
		return nil, err
	}
	list := make([]Stage, 0, len(fields))
	var off int64
	for _, f := range fields {
		off += int64(len(f)) + 1
		head, path, ok := strings.Cut(f, "\t")
		parts := strings.Split(head, " ")
		if !ok || len(parts) != 3 || path == "" {
			return nil, &MalformedError{off, fmt.Sprintf("unmerged entry %q is not <mode> <id> <stage>\\t<path>", f)}
		}
		mode, err := strconv.ParseUint(parts[0], 8, 32)
		if err != nil || len(parts[0]) != 6 {
			return nil, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad mode", f)}
		}
		if !isHex(parts[1]) {
			return nil, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad object id", f)}
		}
		if len(parts[2]) != 1 || parts[2][0] < '1' || parts[2][0] > '3' {
			return nil, &MalformedError{off, fmt.Sprintf("unmerged entry %q: bad stage", f)}
		}
		list = append(list, Stage{Mode: uint32(mode), ID: parts[1], Stage: int(parts[2][0] - '0'), Path: path})
	}
	return list, nil
}

// UnmergedPaths returns the paths with unresolved merge conflicts in the
// index, each once, in index order, with one git process.
func (r Repo) UnmergedPaths(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, "ls-files", "--unmerged", "-z")
	if err != nil {
		return nil, err
	}
	stages, err := ParseUnmerged(out)
	if err != nil {
		return nil, fmt.Errorf("list unmerged paths: %w", err)
	}
	var paths []string
	for i, s := range stages {
		if i == 0 || stages[i-1].Path != s.Path {
			paths = append(paths, s.Path)
		}
	}
	return paths, nil
}
