package safewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/azero-dev/azero/internal/eol"
)

// ApprovalLines is the threshold of spec #173: replacing an existing file
// of more than this many lines needs approval (100 lines do not, 101 do).
const ApprovalLines = 100

// DefaultMode is the mode of new files when Request.Mode is zero.
const DefaultMode fs.FileMode = 0o644

// Request is one proposed write.
type Request struct {
	Root     string      // project root; the target must resolve inside it
	Path     string      // relative to Root, or absolute
	Content  []byte      // whole new content (Replace, Edit), or the piece to merge (Append, Insert, Extend)
	Strategy Strategy    // "" means Replace for an existing file, creation for a new one
	Line     int         // Insert: the new content starts at this 1-based line
	Base     *Snapshot   // what the caller read earlier; the write is refused if the file changed since
	Mode     fs.FileMode // for new files (default 0644); existing files keep their mode
	Actor    string      // who writes, for the audit log ("azero write", "implement:coder", ...)
	RunID    string      // for the audit log, may be empty
}

// Proposal is the analysis of a Request: what the file holds, what it
// would hold, and whether a human must approve. Building one never writes.
type Proposal struct {
	Abs              string   `json:"abs"`
	Rel              string   `json:"path"`
	Exists           bool     `json:"exists"`
	ExistingLines    int      `json:"original_lines"`
	NewLines         int      `json:"lines_after"` // lines of Result, the file after the write
	Added            int      `json:"lines_added"`
	Deleted          int      `json:"lines_deleted"`
	Existing         []byte   `json:"-"`
	Result           []byte   `json:"-"`
	Content          []byte   `json:"-"` // the request's content, to re-merge with another strategy
	Strategy         Strategy `json:"strategy"`
	Line             int      `json:"line,omitempty"`
	RequiresApproval bool     `json:"requires_approval"`
	Diff             string   `json:"diff"`              // unified, capped at MaxDiffBytes with a note
	Warning          string   `json:"warning,omitempty"` // "about to replace N lines with M lines" for a replace of an existing file

	snapshot Snapshot    // of Existing
	mode     fs.FileMode // of the existing file
	target   target
	channel  string // where the human's answer on it came from, once asked
}

// Snapshot returns the snapshot of the content the proposal was computed
// from.
func (p Proposal) Snapshot() Snapshot { return p.snapshot }

// Propose analyses req without writing anything: it confines the path,
// reads the current file, merges by the strategy and decides whether
// approval is needed. Extend for Python runs python3; see
// ProposeContext to bound it.
func Propose(req Request) (Proposal, error) {
	return ProposeContext(context.Background(), req)
}

// ProposeContext is Propose with a context for the python3 run of Extend.
func ProposeContext(ctx context.Context, req Request) (Proposal, error) {
	t, err := confine(req.Root, req.Path, true)
	if err != nil {
		return Proposal{}, err
	}
	existing, mode, snap, err := readTarget(t)
	if err != nil {
		return Proposal{}, err
	}
	p := Proposal{
		Abs:      t.Abs(),
		Rel:      t.Rel,
		Exists:   snap.Exists,
		Existing: existing,
		Content:  req.Content,
		snapshot: snap,
		mode:     mode,
		target:   t,
	}
	if snap.Exists {
		p.ExistingLines = eol.CountLines(existing)
	}
	return p.WithStrategy(ctx, req.Strategy, req.Line)
}

// WithStrategy recomputes the proposal for another strategy (the human's
// choice at the prompt) from the same existing content, without touching
// the disk.
func (p Proposal) WithStrategy(ctx context.Context, s Strategy, line int) (Proposal, error) {
	if s == "" {
		s = Replace
	}
	switch s {
	case Replace, Append, Insert, Extend, Edit:
	default:
		return Proposal{}, fmt.Errorf("unknown strategy %q: use append, insert, extend or replace", s)
	}
	if s != Insert {
		line = 0
	}
	if s == Edit && !p.Exists {
		return Proposal{}, fmt.Errorf("edit %s: the file does not exist; edits apply to existing files, create it with replace", p.Rel)
	}
	result, err := merge(ctx, p.Rel, p.Existing, p.Exists, p.Content, s, line)
	if err != nil {
		return Proposal{}, err
	}
	p.Strategy, p.Line, p.Result = s, line, result
	p.NewLines = eol.CountLines(result)
	var st diffStats
	p.Diff, st = unifiedDiff(filepath.ToSlash(p.Rel), p.Exists, p.Existing, result)
	p.Added, p.Deleted = st.Added, st.Deleted
	p.RequiresApproval = needsApproval(p)
	p.Warning = ""
	if p.Exists && s == Replace && !p.unchanged() {
		p.Warning = fmt.Sprintf("about to replace %d lines with %d lines", p.ExistingLines, p.NewLines)
	}
	return p, nil
}

// needsApproval applies the package's approval rule (see the package
// doc): a replace of an existing file over the threshold always; an
// explicit merge only when it would change or drop an existing line of
// such a file; an edit never; and nothing that leaves the file as it is.
func needsApproval(p Proposal) bool {
	if !p.Exists || p.ExistingLines <= ApprovalLines || p.unchanged() {
		return false
	}
	switch p.Strategy {
	case Replace:
		return true
	case Append, Insert, Extend:
		return !keepsLines(p.Existing, p.Result)
	}
	return false
}

// keepsLines reports whether every line of existing is still in result, in
// order (a subsequence, line endings aside): a merge that only adds lines.
// A last line merely gaining its newline is kept.
func keepsLines(existing, result []byte) bool {
	old, res := eol.SplitKeep(existing), eol.SplitKeep(result)
	j := 0
	for _, l := range old {
		l = bytes.TrimRight(l, "\r\n")
		for j < len(res) && !bytes.Equal(bytes.TrimRight(res[j], "\r\n"), l) {
			j++
		}
		if j == len(res) {
			return false
		}
		j++
	}
	return true
}

// unchanged reports whether the write would leave the file as it is.
func (p Proposal) unchanged() bool {
	return p.Exists && bytes.Equal(p.Existing, p.Result)
}

var errNoBase = errors.New("an edit must carry the snapshot of the content it was derived from (Request.Base)")
