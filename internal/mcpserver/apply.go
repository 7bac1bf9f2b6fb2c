package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/agentpolicy"
	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/safewrite"
)

// ApplyArgs are azero_apply's arguments.
type ApplyArgs struct {
	File   string `json:"file" jsonschema:"the existing file to change, relative to the project root (or absolute inside it)"`
	Edits  string `json:"edits" jsonschema:"the edit blocks: ### CHANGE n / FIND: / REPLACE WITH: with fenced code, or <<<<<<< SEARCH / ======= / >>>>>>> REPLACE"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"return the unified diff and write nothing"`
}

// BlockResult is how one edit block applied.
type BlockResult struct {
	Block     int    `json:"block"`
	Match     string `json:"match"` // exact, or whitespace (matched with whitespace ignored)
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// ApplyResult is what azero_apply did.
type ApplyResult struct {
	File         string        `json:"file"` // relative to the project root
	Applied      bool          `json:"applied"`
	DryRun       bool          `json:"dry_run"`
	Blocks       int           `json:"blocks"`
	Results      []BlockResult `json:"results"`
	OldLines     int           `json:"original_lines"`
	NewLines     int           `json:"lines_after"`
	AddedLines   int           `json:"lines_added"`
	DeletedLines int           `json:"lines_deleted"`
	Approved     bool          `json:"approved_by_user,omitempty"`
	Diff         string        `json:"diff,omitempty"`
}

func (s *server) apply(ctx context.Context, req *mcp.CallToolRequest, args ApplyArgs) (*mcp.CallToolResult, ApplyResult, error) {
	if args.File == "" {
		return nil, ApplyResult{}, errors.New("file is required: the path of the existing file to change")
	}
	before, snap, err := safewrite.Read(s.root, args.File)
	if err != nil {
		return nil, ApplyResult{}, s.explain(err)
	}
	if !snap.Exists {
		return nil, ApplyResult{}, fmt.Errorf("%s does not exist: edit blocks change an existing file; create it with azero_write", args.File)
	}
	blocks, err := edit.Parse(args.Edits)
	if err != nil {
		return nil, ApplyResult{}, fmt.Errorf("nothing was written: %w", err)
	}
	for _, b := range blocks {
		if b.Path != "" && !samePathTail(args.File, b.Path) {
			return nil, ApplyResult{}, fmt.Errorf("nothing was written: edit block %d names %s, not %s; send the blocks for one file per call", b.N, b.Path, args.File)
		}
	}
	after, results, err := edit.Apply(string(before), blocks)
	if err != nil {
		return nil, ApplyResult{}, fmt.Errorf("nothing was written to %s: %w", args.File, err)
	}
	sreq := safewrite.Request{Root: s.root, Path: args.File, Content: []byte(after), Strategy: safewrite.Edit, Base: &snap, Actor: actor(req)}
	p, err := safewrite.ProposeContext(ctx, sreq)
	if err != nil {
		return nil, ApplyResult{}, s.explain(err)
	}
	applied := make([]BlockResult, len(results))
	for i, r := range results {
		applied[i] = BlockResult{Block: r.Block, Match: r.Match.String(), StartLine: r.StartLine, EndLine: r.EndLine}
	}
	out := ApplyResult{File: filepath.ToSlash(p.Rel), DryRun: args.DryRun, Blocks: len(blocks), Results: applied,
		OldLines: p.ExistingLines, NewLines: p.NewLines, AddedLines: p.Added, DeletedLines: p.Deleted}
	if args.DryRun {
		out.Diff = p.Diff
		return nil, out, nil
	}
	if p.Snapshot() != snap {
		return nil, ApplyResult{}, fmt.Errorf("%s changed while azero was applying the edits; nothing was written: retry", p.Rel)
	}
	if agentpolicy.ProposalGuts(p) || answering(req) {
		outcome, question, why := s.ask(ctx, req, "azero_apply", p, agentpolicy.GutReason(p))
		switch outcome {
		case approvalAsk:
			return question, ApplyResult{}, nil
		case approvalUnavailable:
			return nil, ApplyResult{}, fmt.Errorf("nothing was written: %s, and this MCP client cannot ask the user (it does not support elicitation). "+
				"Keep the code you are not changing: make FIND cover only the lines that change, in several smaller blocks", agentpolicy.GutReason(p))
		case approvalRefused:
			return nil, ApplyResult{}, errors.New(why)
		}
		out.Approved = true
	}
	// Edit content carries the snapshot it was derived from: safewrite
	// refuses it if the file changed since it was read.
	w := &safewrite.Writer{Audit: s.audit}
	if _, err := w.Write(ctx, sreq); err != nil {
		return nil, ApplyResult{}, s.explain(err)
	}
	out.Applied = true
	return nil, out, nil
}

// samePathTail reports whether file ends with the block's path (models
// name files relative to roots azero does not know).
func samePathTail(file, blockPath string) bool {
	bp := path.Clean(filepath.ToSlash(strings.TrimSpace(blockPath)))
	fp := path.Clean(filepath.ToSlash(file))
	return fp == bp || strings.HasSuffix(fp, "/"+strings.TrimPrefix(bp, "/")) || strings.HasSuffix(bp, "/"+strings.TrimPrefix(fp, "/"))
}
