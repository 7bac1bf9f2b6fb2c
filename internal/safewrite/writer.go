package safewrite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/eol"
	"github.com/azero-dev/azero/internal/extend"
	"github.com/azero-dev/azero/internal/human"
)

// Audit event names.
const (
	EventWrite   = "file_write"
	EventMove    = "file_move"
	EventRemove  = "file_remove"
	EventRefused = "file_write_refused"
	// EventApproval records the decision on a write that needed approval,
	// before the write is made: a decision the log cannot take is not
	// acted on.
	EventApproval = "file_write_approval"
)

// Approval says how a write was allowed.
type Approval string

// How a write was allowed.
const (
	ApprovalNotRequired Approval = "not_required" // nothing over the threshold was replaced
	ApprovalForced      Approval = "forced"       // Force: the explicit replace, nobody asked
	ApprovalApproved    Approval = "approved"     // the Approver (a human) approved it
)

// Writer performs confined, approved, atomic, audited writes. The zero
// value writes nothing that needs approval and audits nowhere.
type Writer struct {
	Audit    *audit.Logger // nil: no audit log
	Approver Approver      // nil: nobody can be asked
	Auto     bool          // never ask: a write needing approval is refused unless Force
	Force    bool          // the explicit replace is allowed without asking
}

// Result reports a write.
type Result struct {
	Path             string   `json:"path"` // relative to the resolved root
	Abs              string   `json:"abs"`
	Strategy         Strategy `json:"strategy"`
	Line             int      `json:"line,omitempty"`
	Created          bool     `json:"created"`
	Unchanged        bool     `json:"unchanged"` // the content was already there; nothing was written
	OldLines         int      `json:"original_lines"`
	NewLines         int      `json:"lines_after"`
	AddedLines       int      `json:"lines_added"`
	DeletedLines     int      `json:"lines_deleted"`
	OldSHA256        string   `json:"old_sha256,omitempty"`
	NewSHA256        string   `json:"new_sha256"`
	Bytes            int      `json:"bytes"`
	Mode             string   `json:"mode"`
	ApprovalRequired bool     `json:"approval_required"`
	Approval         Approval `json:"approval"`
}

// Write confines, analyses, gets approval for and atomically performs one
// write, and audits the outcome either way. See the package doc for the
// rules.
func (w *Writer) Write(ctx context.Context, req Request) (Result, error) {
	res, p, err := w.write(ctx, req)
	if err != nil {
		strategy := req.Strategy
		if p != nil {
			strategy = p.Strategy
		}
		attrs := []slog.Attr{slog.String("op", "write"), slog.String("strategy", string(strategy)), slog.Int("line", req.Line)}
		if p != nil {
			attrs = append(attrs, slog.Bool("exists", p.Exists),
				slog.Int("old_lines", p.ExistingLines), slog.Int("new_lines", p.NewLines),
				slog.String("old_sha256", p.snapshot.SHA256), slog.Bool("approval_required", p.RequiresApproval))
			if p.channel != "" {
				attrs = append(attrs, slog.String("channel", p.channel)) // a human refused it there
			}
		}
		w.refused(ctx, req.Root, req.Path, req.Actor, req.RunID, err, attrs...)
		return Result{}, err
	}
	w.Audit.Event(ctx, EventWrite, req.RunID,
		slog.String("path", res.Path), slog.String("root", p.target.Root), slog.String("actor", req.Actor),
		slog.String("strategy", string(res.Strategy)), slog.Int("line", res.Line), slog.Bool("created", res.Created),
		slog.Bool("unchanged", res.Unchanged), slog.Int("old_lines", res.OldLines), slog.Int("new_lines", res.NewLines),
		slog.Int("added_lines", res.AddedLines), slog.Int("deleted_lines", res.DeletedLines),
		slog.String("old_sha256", res.OldSHA256), slog.String("new_sha256", res.NewSHA256), slog.Int("bytes", res.Bytes),
		slog.String("mode", res.Mode), slog.Bool("approval_required", res.ApprovalRequired), slog.String("approval", string(res.Approval)))
	return res, nil
}

func (w *Writer) write(ctx context.Context, req Request) (Result, *Proposal, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, nil, err
	}
	if req.Strategy == Edit && req.Base == nil {
		return Result{}, nil, fmt.Errorf("edit %s: %w", req.Path, errNoBase)
	}
	p, err := ProposeContext(ctx, req)
	if err != nil {
		return Result{}, nil, err
	}
	if req.Base != nil && *req.Base != p.snapshot {
		return Result{}, &p, &StaleError{Path: p.Rel, Read: *req.Base, Now: p.snapshot}
	}

	approval := ApprovalNotRequired
	required := p.RequiresApproval
	if required {
		switch {
		case w.Force:
			approval = ApprovalForced
		case w.Auto || w.Approver == nil:
			return Result{}, &p, &ApprovalError{Path: p.Rel, ExistingLines: p.ExistingLines, NewLines: p.NewLines,
				Auto: w.Auto, Interactive: w.Approver != nil}
		default:
			d, err := w.Approver.Decide(ctx, p)
			if err != nil {
				return Result{}, &p, fmt.Errorf("approval for %s: %w", p.Rel, err)
			}
			p.channel = d.Channel
			if !d.Approved {
				return Result{}, &p, errAbortedBy(p.Rel, human.ErrAborted)
			}
			if d.Strategy != "" && (d.Strategy != p.Strategy || d.Line != p.Line) {
				if p, err = p.WithStrategy(ctx, d.Strategy, d.Line); err != nil {
					return Result{}, &p, err
				}
				p.channel = d.Channel
			}
			approval = ApprovalApproved
		}
		attrs := []slog.Attr{slog.String("path", p.Rel), slog.String("actor", req.Actor),
			slog.String("approval", string(approval)), slog.Int("old_lines", p.ExistingLines), slog.Int("new_lines", p.NewLines)}
		if p.channel != "" {
			attrs = append(attrs, slog.String("channel", p.channel))
		}
		if err := w.Audit.Event(ctx, EventApproval, req.RunID, attrs...); err != nil {
			return Result{}, &p, fmt.Errorf("write %s: the approval could not be recorded in the audit log, so nothing was written (%w); free disk space or fix the log's permissions and try again", p.Rel, err)
		}
	}

	mode := p.mode
	if !p.Exists {
		mode = req.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if mode == 0 {
			mode = DefaultMode
		}
	}
	res := Result{
		Path: p.Rel, Abs: p.Abs, Strategy: p.Strategy, Line: p.Line, Created: !p.Exists,
		OldLines: p.ExistingLines, NewLines: p.NewLines, AddedLines: p.Added, DeletedLines: p.Deleted,
		OldSHA256: p.snapshot.SHA256, NewSHA256: sha256Hex(p.Result), Bytes: len(p.Result),
		Mode: fmt.Sprintf("%#o", uint32(mode.Perm())), ApprovalRequired: required, Approval: approval,
	}
	if p.unchanged() {
		res.Unchanged = true
		return res, &p, nil
	}
	if err := commit(ctx, p.target, p.Result, mode, p.snapshot); err != nil {
		return Result{}, &p, err
	}
	return res, &p, nil
}

// refused records a refusal in the audit log.
func (w *Writer) refused(ctx context.Context, root, path, actor, runID string, err error, attrs ...slog.Attr) {
	attrs = append([]slog.Attr{slog.String("path", path), slog.String("root", root), slog.String("actor", actor),
		slog.String("refusal", refusalKind(err)), slog.String("reason", err.Error())}, attrs...)
	w.Audit.Event(ctx, EventRefused, runID, attrs...)
}

// refusalKind classifies a refusal for the audit log.
func refusalKind(err error) string {
	var (
		pt    *PathTraversalError
		stale *StaleError
		ext   *extend.Error
		rng   *InsertRangeError
	)
	switch {
	case errors.As(err, &pt):
		return "path"
	case errors.As(err, &stale):
		return "stale"
	case errors.Is(err, ErrNeedsApproval):
		return "needs_approval"
	case errors.Is(err, human.ErrAborted):
		return "rejected"
	case human.Needed(err):
		return "needs_human"
	case errors.As(err, &ext), errors.As(err, &rng):
		return "merge"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "interrupted"
	}
	return "error"
}

// Move renames a file or directory inside root, both paths confined (the
// entries themselves are moved, as mv does: a symlink is moved, not its
// target). It never moves over an existing entry and creates missing
// parent directories of to. The move is audited.
func (w *Writer) Move(ctx context.Context, root, from, to string, actor, runID string) error {
	src, dst, kind, err := move(ctx, root, from, to)
	if err != nil {
		w.refused(ctx, root, from, actor, runID, err, slog.String("op", "move"), slog.String("to", to))
		return err
	}
	w.Audit.Event(ctx, EventMove, runID, slog.String("path", src.Rel), slog.String("to", dst.Rel),
		slog.String("root", src.Root), slog.String("actor", actor), slog.String("kind", kind))
	return nil
}

func move(ctx context.Context, root, from, to string) (src, dst target, kind string, err error) {
	if err := ctx.Err(); err != nil {
		return src, dst, "", err
	}
	if src, err = confine(root, from, false); err != nil {
		return src, dst, "", err
	}
	if dst, err = confine(root, to, false); err != nil {
		return src, dst, "", err
	}
	r, err := os.OpenRoot(src.Root)
	if err != nil {
		return src, dst, "", fmt.Errorf("open project root: %w", err)
	}
	defer r.Close()
	fi, err := r.Lstat(src.Rel)
	if err != nil {
		return src, dst, "", fmt.Errorf("move %s: %w", src.Rel, err)
	}
	kind = "file"
	if fi.IsDir() {
		kind = "directory"
	}
	if _, err := r.Lstat(dst.Rel); err == nil {
		return src, dst, kind, fmt.Errorf("move %s to %s: the destination already exists; azero never moves over an existing entry", src.Rel, dst.Rel)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return src, dst, kind, fmt.Errorf("move to %s: %w", dst.Rel, err)
	}
	if dst.Rel == src.Rel || strings.HasPrefix(dst.Rel, src.Rel+string(filepath.Separator)) {
		return src, dst, kind, fmt.Errorf("move %s to %s: cannot move a directory into itself", src.Rel, dst.Rel)
	}
	if err := ensureDir(r, filepath.Dir(dst.Rel)); err != nil {
		return src, dst, kind, err
	}
	if err := r.Rename(src.Rel, dst.Rel); err != nil {
		return src, dst, kind, fmt.Errorf("move %s to %s: %w", src.Rel, dst.Rel, err)
	}
	if err := syncDir(r, filepath.Dir(src.Rel)); err != nil {
		return src, dst, kind, err
	}
	if filepath.Dir(dst.Rel) != filepath.Dir(src.Rel) {
		if err := syncDir(r, filepath.Dir(dst.Rel)); err != nil {
			return src, dst, kind, err
		}
	}
	return src, dst, kind, nil
}

// Remove deletes one file (or symlink) inside root, confined like a
// write, and audits its line count and sha256. Directories are refused.
func (w *Writer) Remove(ctx context.Context, root, path string, actor, runID string) error {
	t, content, existed, err := remove(ctx, root, path)
	if err != nil {
		w.refused(ctx, root, path, actor, runID, err, slog.String("op", "remove"))
		return err
	}
	attrs := []slog.Attr{slog.String("path", t.Rel), slog.String("root", t.Root), slog.String("actor", actor)}
	if existed {
		attrs = append(attrs, slog.Int("old_lines", eol.CountLines(content)), slog.String("old_sha256", sha256Hex(content)))
	}
	w.Audit.Event(ctx, EventRemove, runID, attrs...)
	return nil
}

func remove(ctx context.Context, root, path string) (t target, content []byte, regular bool, err error) {
	if err := ctx.Err(); err != nil {
		return t, nil, false, err
	}
	if t, err = confine(root, path, false); err != nil {
		return t, nil, false, err
	}
	r, err := os.OpenRoot(t.Root)
	if err != nil {
		return t, nil, false, fmt.Errorf("open project root: %w", err)
	}
	defer r.Close()
	fi, err := r.Lstat(t.Rel)
	if err != nil {
		return t, nil, false, fmt.Errorf("remove %s: %w", t.Rel, err)
	}
	if fi.IsDir() {
		return t, nil, false, fmt.Errorf("remove %s: it is a directory; Remove deletes files only", t.Rel)
	}
	if fi.Mode().IsRegular() {
		if content, err = r.ReadFile(t.Rel); err != nil {
			return t, nil, false, fmt.Errorf("read %s before removing it: %w", t.Rel, err)
		}
		regular = true
	}
	if err := r.Remove(t.Rel); err != nil {
		return t, nil, false, fmt.Errorf("remove %s: %w", t.Rel, err)
	}
	return t, content, regular, syncDir(r, filepath.Dir(t.Rel))
}
