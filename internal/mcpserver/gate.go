package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/review"
)

// GateArgs are azero_gate's arguments.
type GateArgs struct {
	Repository string `json:"repository,omitempty" jsonschema:"a directory inside the project root holding the repository; default the project root"`
	Staged     bool   `json:"staged,omitempty" jsonschema:"analyse only the index (what a plain git commit takes) instead of all changes"`
}

// GateResult is the diff gate's analysis. It is never an approval.
type GateResult struct {
	Repository     string                `json:"repository"`
	Files          []review.FileAnalysis `json:"files"`
	Flagged        []string              `json:"flagged_files"`
	RequiresReview bool                  `json:"requires_review"`
	Approved       bool                  `json:"approved"` // always false: analysis approves nothing
	Report         string                `json:"report"`
	Next           string                `json:"next"`
}

// maxGateDiffLines caps each flagged file's diff in the report.
const maxGateDiffLines = 200

func (s *server) gate(ctx context.Context, _ *mcp.CallToolRequest, args GateArgs) (*mcp.CallToolResult, GateResult, error) {
	dir, err := s.confineDir(args.Repository)
	if err != nil {
		return nil, GateResult{}, err
	}
	top, err := gitx.TopLevel(ctx, dir)
	if err != nil {
		return nil, GateResult{}, err
	}
	if rel, err := filepath.Rel(s.root, top); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// The root lies inside a larger repository: analyse only what the
		// server may see.
		return nil, GateResult{}, fmt.Errorf("the repository holding %s is %s, which reaches outside the project root %s: azero_gate analyses repositories inside the root only", dir, top, s.root)
	}
	files, err := review.Analyze(ctx, top, review.AnalyzeOptions{Staged: args.Staged})
	if err != nil {
		return nil, GateResult{}, err
	}
	flagged := review.Flagged(files)
	var flaggedFiles []review.FileAnalysis
	for _, f := range files {
		if f.RequiresReview {
			flaggedFiles = append(flaggedFiles, f)
		}
	}
	diffs, err := review.Diffs(ctx, top, flaggedFiles, review.DiffOptions{Staged: args.Staged, MaxLines: maxGateDiffLines})
	if err != nil {
		return nil, GateResult{}, err
	}
	out := GateResult{
		Repository:     top,
		Files:          files,
		Flagged:        flagged,
		RequiresReview: len(flagged) > 0,
		Report:         review.FormatReport(files, diffs, review.ReportOptions{MaxDiffLines: maxGateDiffLines, Staged: args.Staged}),
	}
	if out.Files == nil {
		out.Files = []review.FileAnalysis{}
	}
	if out.RequiresReview {
		out.Next = "This analysis approves nothing. The flagged files lose most of their content or are deleted: " +
			"check the diffs above for code lost by mistake, restore what should stay, and leave the commit to a human, " +
			"who reviews it with `azero gate` in a terminal (only a typed approve passes)."
	} else {
		out.Next = "This analysis approves nothing. Nothing is flagged: no file loses most of its content."
	}
	return nil, out, nil
}

// confineDir resolves a directory argument inside the project root (the
// root itself included).
func (s *server) confineDir(dir string) (string, error) {
	if dir == "" {
		return s.root, nil
	}
	if strings.ContainsRune(dir, 0) {
		return "", errors.New("the repository path contains a NUL byte")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.root, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w; give a directory inside the project root %s", dir, err, s.root)
	}
	rel, err := filepath.Rel(s.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("refusing repository %s: it resolves to %s, outside the project root %s", dir, real, s.root)
	}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(c, ".git") {
			return "", fmt.Errorf("refusing repository %s: it is inside .git; give the work tree", dir)
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("repository %s is not a directory", dir)
	}
	return real, nil
}
