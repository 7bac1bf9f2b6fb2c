package agenthook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/agentpolicy"
	"github.com/azero-dev/azero/internal/safewrite"
)

// target is the file a file tool would change, confined by azero's rules.
type target struct {
	root string // the project root
	path string // absolute, as the tool gave it (joined to cwd if relative)
}

func (h *Hook) target(ctx context.Context, p Payload, filePath string) (target, error) {
	if filePath == "" {
		return target{}, fmt.Errorf("the %s tool_input has no file path", p.ToolName)
	}
	cwd, err := h.cwd(p)
	if err != nil {
		return target{}, err
	}
	root, err := projectRoot(ctx, cwd)
	if err != nil {
		return target{}, err
	}
	if !filepath.IsAbs(filePath) {
		// Not filepath.Join: it would fold "link/.." lexically.
		filePath = cwd + string(filepath.Separator) + filePath
	}
	return target{root: root, path: filePath}, nil
}

// refusal turns an error about the target into a decision: a path outside
// the root (or into .git) is denied with the rule, any other error is
// denied as an error.
func refusal(t target, err error) Response {
	var pt *safewrite.PathTraversalError
	if errors.As(err, &pt) {
		return Response{Decision: Deny, Reason: fmt.Sprintf("azero denies this: %v. Claude may change files only inside the project root %s, never inside .git, and never through a symlink that leads out of it.", err, t.root)}
	}
	return errorResponse(err)
}

func (h *Hook) decideWrite(ctx context.Context, p Payload) (Response, []slog.Attr) {
	var in WriteInput
	if err := p.toolInput(&in); err != nil {
		return errorResponse(err), nil
	}
	attrs := []slog.Attr{slog.String("path", in.FilePath)}
	if in.Content == nil {
		return errorResponse(errors.New("the Write tool_input has no content")), attrs
	}
	t, err := h.target(ctx, p, in.FilePath)
	if err != nil {
		return refusal(t, err), attrs
	}
	prop, err := safewrite.Propose(safewrite.Request{Root: t.root, Path: t.path, Content: []byte(*in.Content), Strategy: safewrite.Replace})
	if err != nil {
		return refusal(t, err), attrs
	}
	attrs = proposalAttrs(prop)
	switch {
	case claudeSettings(prop.Rel):
		return Response{Decision: Ask, Reason: settingsReason(prop)}, attrs
	case prop.Exists && bytes.Equal(prop.Existing, prop.Result):
		return Response{Decision: Allow, Reason: fmt.Sprintf("azero: %s already holds this content", prop.Rel)}, attrs
	case prop.RequiresApproval:
		return Response{Decision: Ask, Reason: "azero: " + agentpolicy.ReplaceReason(prop) + ". Allow it only after checking that nothing was dropped; for a targeted change Claude should use Edit." +
			quoteDeleted(diffDeletions(prop.Diff), prop.Deleted)}, attrs
	case !prop.Exists:
		return Response{Decision: Allow, Reason: fmt.Sprintf("azero: new file %s (%d lines)", prop.Rel, prop.NewLines)}, attrs
	}
	return Response{Decision: Allow, Reason: fmt.Sprintf("azero: %s has %d lines (at most %d): a whole-file write needs no approval", prop.Rel, prop.ExistingLines, safewrite.ApprovalLines)}, attrs
}

func (h *Hook) decideEdit(ctx context.Context, p Payload) (Response, []slog.Attr) {
	filePath, edits, err := editsOf(p)
	attrs := []slog.Attr{slog.String("path", filePath)}
	if err != nil {
		return errorResponse(err), attrs
	}
	t, err := h.target(ctx, p, filePath)
	if err != nil {
		return refusal(t, err), attrs
	}
	existing, snap, err := safewrite.Read(t.root, t.path)
	if err != nil {
		return refusal(t, err), attrs
	}
	after, err := ApplyEdits(string(existing), snap.Exists, edits)
	if err != nil {
		return Response{Decision: Deny, Reason: fmt.Sprintf("azero cannot check this %s of %s, so it is denied: %v", p.ToolName, filePath, err)}, attrs
	}
	prop, err := safewrite.Propose(safewrite.Request{Root: t.root, Path: t.path, Content: []byte(after), Strategy: safewrite.Replace})
	if err != nil {
		return refusal(t, err), attrs
	}
	attrs = proposalAttrs(prop)
	switch {
	case claudeSettings(prop.Rel):
		return Response{Decision: Ask, Reason: settingsReason(prop)}, attrs
	case agentpolicy.ProposalGuts(prop):
		return Response{Decision: Ask, Reason: "azero: " + agentpolicy.GutReason(prop) + ". Allow it only if removing that code is intended." +
			quoteDeleted(diffDeletions(prop.Diff), prop.Deleted)}, attrs
	case !prop.Exists:
		return Response{Decision: Allow, Reason: fmt.Sprintf("azero: new file %s (%d lines)", prop.Rel, prop.NewLines)}, attrs
	}
	return Response{Decision: Allow, Reason: fmt.Sprintf("azero: %s -%d +%d of %d lines", prop.Rel, prop.Deleted, prop.Added, prop.ExistingLines)}, attrs
}

// editsOf reads the file path and string edits of an Edit or MultiEdit.
func editsOf(p Payload) (string, []StringEdit, error) {
	one := func(e EditInput, n int) (StringEdit, error) {
		if e.OldString == nil || e.NewString == nil {
			return StringEdit{}, fmt.Errorf("edit %d of the %s tool_input lacks old_string or new_string", n, p.ToolName)
		}
		return StringEdit{OldString: *e.OldString, NewString: *e.NewString, ReplaceAll: e.ReplaceAll}, nil
	}
	if p.ToolName == "Edit" {
		var in EditInput
		if err := p.toolInput(&in); err != nil {
			return "", nil, err
		}
		e, err := one(in, 1)
		return in.FilePath, []StringEdit{e}, err
	}
	var in MultiEditInput
	if err := p.toolInput(&in); err != nil {
		return "", nil, err
	}
	if len(in.Edits) == 0 {
		return in.FilePath, nil, errors.New("the MultiEdit tool_input has no edits")
	}
	edits := make([]StringEdit, len(in.Edits))
	for i, e := range in.Edits {
		var err error
		if edits[i], err = one(e, i+1); err != nil {
			return in.FilePath, nil, err
		}
	}
	return in.FilePath, edits, nil
}

// decideNotebook judges a NotebookEdit like an Edit of the notebook's
// cell source: confined like any write, denied when azero cannot tell what
// it would do (no such notebook, not a notebook, no such cell), asked when
// it deletes more than half of the lines of cell source of a notebook over
// the approval threshold (a deleted cell's lines all go, a replaced cell
// loses the lines its new source does not keep), allowed otherwise.
func (h *Hook) decideNotebook(ctx context.Context, p Payload) (Response, []slog.Attr) {
	var in NotebookEditInput
	if err := p.toolInput(&in); err != nil {
		return errorResponse(err), nil
	}
	attrs := []slog.Attr{slog.String("path", in.NotebookPath)}
	t, err := h.target(ctx, p, in.NotebookPath)
	if err != nil {
		return refusal(t, err), attrs
	}
	doc, snap, err := safewrite.Read(t.root, t.path)
	if err != nil {
		return refusal(t, err), attrs
	}
	// The notebook's path in the project, as every other answer names it.
	prop, err := safewrite.Propose(safewrite.Request{Root: t.root, Path: t.path, Content: doc, Strategy: safewrite.Replace})
	if err != nil {
		return refusal(t, err), attrs
	}
	attrs = []slog.Attr{slog.String("path", prop.Rel), slog.String("cell_id", in.CellID), slog.String("edit_mode", in.EditMode)}
	cannot := func(why string) (Response, []slog.Attr) {
		return Response{Decision: Deny, Reason: fmt.Sprintf("azero cannot check this NotebookEdit of %s, so it is denied: %s", prop.Rel, why)}, attrs
	}
	switch {
	case !snap.Exists:
		return cannot("the notebook does not exist, and NotebookEdit changes an existing one: create it with Write")
	case in.NewSource == nil && in.EditMode != NotebookDelete:
		return cannot("the tool_input has no new_source")
	}
	edit := NotebookEdit{CellID: in.CellID, Mode: in.EditMode}
	if in.NewSource != nil {
		edit.NewSource = *in.NewSource
	}
	ch, err := ApplyNotebookEdit(doc, edit)
	if err != nil {
		return cannot(err.Error())
	}
	deleted := len(ch.DeletedLines)
	attrs = append(attrs, slog.Int("cell_lines", ch.Lines), slog.Int("added_lines", ch.Added), slog.Int("deleted_lines", deleted))
	what := notebookWhat(edit.Mode, ch)
	if agentpolicy.Guts(ch.Lines, deleted) {
		adding := ""
		if ch.Added > 0 {
			adding = fmt.Sprintf(" (adding %d)", ch.Added)
		}
		return Response{Decision: Ask, Reason: fmt.Sprintf("azero: this NotebookEdit (%s) deletes %d of the %d lines of cell source of %s%s: "+
			"an edit removing more than half of a notebook over %d lines of cell source needs a human's approval. Allow it only if removing that code is intended.",
			what, deleted, ch.Lines, prop.Rel, adding, safewrite.ApprovalLines) + quoteDeleted(ch.DeletedLines, deleted)}, attrs
	}
	return Response{Decision: Allow, Reason: fmt.Sprintf("azero: %s, %s: -%d +%d of %d lines of cell source", prop.Rel, what, deleted, ch.Added, ch.Lines)}, attrs
}

// notebookWhat says what a NotebookEdit does, for its reason.
func notebookWhat(mode string, ch NotebookChange) string {
	switch {
	case mode == NotebookDelete:
		return fmt.Sprintf("deleting cell %s", ch.Cell)
	case mode == NotebookInsert && ch.Cell == "":
		return "inserting a cell first"
	case mode == NotebookInsert:
		return fmt.Sprintf("inserting a cell after %s", ch.Cell)
	case ch.Index == ch.Cells:
		return "adding a cell at the end"
	}
	return fmt.Sprintf("replacing cell %s", ch.Cell)
}

func proposalAttrs(p safewrite.Proposal) []slog.Attr {
	return []slog.Attr{slog.String("path", p.Rel), slog.Bool("exists", p.Exists), slog.Int("old_lines", p.ExistingLines),
		slog.Int("new_lines", p.NewLines), slog.Int("added_lines", p.Added), slog.Int("deleted_lines", p.Deleted)}
}

// claudeSettings reports whether rel is a Claude Code settings file: it
// holds the hooks, azero's among them, and the permission rules.
func claudeSettings(rel string) bool {
	rel = filepath.ToSlash(rel)
	dir, base := path.Split(rel)
	return strings.EqualFold(path.Base(strings.TrimSuffix(dir, "/")), ".claude") &&
		(strings.EqualFold(base, "settings.json") || strings.EqualFold(base, "settings.local.json"))
}

func settingsReason(p safewrite.Proposal) string {
	return fmt.Sprintf("azero: %s configures Claude Code's hooks and permissions, azero's hook among them: a change to it (-%d +%d lines) needs your approval", p.Rel, p.Deleted, p.Added)
}
