package agenthook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/shellcmd"
)

// maxListed bounds the files a reason lists.
const maxListed = 15

func (h *Hook) decideBash(ctx context.Context, p Payload) (Response, []slog.Attr) {
	var in BashInput
	if err := p.toolInput(&in); err != nil {
		return errorResponse(err), nil
	}
	if in.Command == nil {
		return errorResponse(errors.New("the Bash tool_input has no command")), nil
	}
	cwd, err := h.cwd(p)
	if err != nil {
		return errorResponse(err), nil
	}
	aliases := GitAliases
	if h.Aliases != nil {
		aliases = h.Aliases
	}
	commits := shellcmd.CommitScanner{Cwd: cwd, Home: h.Home, Aliases: aliases(ctx)}.Commits(*in.Command)
	if len(commits) == 0 {
		return Response{}, nil
	}
	attrs := []slog.Attr{slog.String("command", shellcmd.Shorten(*in.Command))}
	var (
		resp    Response
		reasons []string
		flagged []string
	)
	for _, c := range commits {
		v := h.commitVerdict(ctx, c)
		flagged = append(flagged, v.flagged...)
		if v.resp.Decision.rank() > resp.Decision.rank() {
			resp.Decision = v.resp.Decision
		}
		if v.resp.Reason != "" {
			reasons = append(reasons, v.resp.Reason)
		}
	}
	attrs = append(attrs, slog.Any("flagged_files", flagged))
	if resp.Decision == Abstain {
		return Response{}, attrs
	}
	resp.Reason = strings.Join(reasons, "\n\n")
	return resp, attrs
}

// verdict is the answer for one commit.
type verdict struct {
	resp    Response
	flagged []string
}

// commitVerdict runs the diff gate's analysis on what the commit would
// take. Flagged files, skipped hooks and anything azero cannot be sure of
// ask the human; a commit that loses nothing gets no opinion (the Bash
// command may do more than commit, so azero never allows it).
func (h *Hook) commitVerdict(ctx context.Context, c shellcmd.Commit) verdict {
	if c.Dir == "" {
		why := "azero cannot tell which repository this git commit runs in"
		if c.Uncertain != "" {
			why = c.Uncertain
		}
		return verdict{resp: Response{Decision: Ask, Reason: fmt.Sprintf("azero: %s (%s), so its diff cannot be reviewed: check what it commits before allowing it.", why, c.Text)}}
	}
	files, scope, err := analyzeCommit(ctx, c)
	if err != nil {
		return verdict{resp: Response{Decision: Deny, Reason: fmt.Sprintf("azero cannot analyse what `%s` would commit, so it is denied: %v", c.Text, err)}}
	}
	flagged := review.Flagged(files)
	var why []string
	if len(flagged) > 0 {
		why = append(why, fmt.Sprintf("the diff gate flagged %d of the %s this commit would take (%s)",
			len(flagged), plural(len(files), "file"), scope))
	}
	if c.NoVerify {
		why = append(why, "it skips the repository's commit hooks (--no-verify), so azero asks instead")
	}
	if c.HooksOff != "" {
		why = append(why, "it turns the repository's commit hooks off ("+c.HooksOff+"), so azero asks instead")
	}
	if c.Uncertain != "" {
		why = append(why, c.Uncertain+", so azero cannot be sure what it commits")
	}
	if len(why) == 0 {
		return verdict{flagged: flagged}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "azero: `%s`: %s.", c.Text, strings.Join(why, "; "))
	b.WriteString(summary(files))
	if len(flagged) > 0 {
		b.WriteString("\nReview the flagged files' diffs before allowing the commit.")
	}
	return verdict{resp: Response{Decision: Ask, Reason: b.String()}, flagged: flagged}
}

// analyzeCommit returns what the commit would take, as the diff gate sees
// it: the index, and the working tree too when the commit may take it;
// against HEAD, or HEAD's parent for --amend. scope says which.
func analyzeCommit(ctx context.Context, c shellcmd.Commit) ([]review.FileAnalysis, string, error) {
	top, err := gitx.TopLevel(ctx, c.Dir)
	if err != nil {
		return nil, "", err
	}
	repo := gitx.Repo{Dir: top}
	ok, err := repo.HasCommits(ctx)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		if c.Amend {
			return nil, "", fmt.Errorf("%s has no commit to amend", top)
		}
		return nil, "the first commit: nothing existing can be lost", nil
	}
	base, scope := "", "the staged changes"
	if c.Amend {
		if base, err = amendBase(ctx, repo); err != nil {
			return nil, "", err
		}
		scope = "HEAD's changes and the staged ones, because of --amend"
	}
	files, err := review.Analyze(ctx, top, review.AnalyzeOptions{Staged: true, Base: base})
	if err != nil {
		return nil, "", err
	}
	if c.WorkingTree() {
		tree, err := review.Analyze(ctx, top, review.AnalyzeOptions{Base: base})
		if err != nil {
			return nil, "", err
		}
		files = union(files, tree)
		scope += " and the working tree's changes"
		switch {
		case c.All:
			scope += ", because of -a"
		case c.Pathspecs:
			scope += ", because it names paths"
		case c.AfterChanges:
			scope += ", because the command changes the index before it"
		}
	}
	return files, scope, nil
}

// amendBase is HEAD's first parent, or the empty tree when HEAD is the
// first commit.
func amendBase(ctx context.Context, repo gitx.Repo) (string, error) {
	out, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^1^{commit}")
	var ge *gitx.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		out, err = repo.Run(ctx, "hash-object", "-t", "tree", "/dev/null")
	}
	if err != nil {
		return "", fmt.Errorf("find the commit --amend would replace: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// union merges two analyses by path; a flagged entry wins.
func union(a, b []review.FileAnalysis) []review.FileAnalysis {
	byPath := map[string]review.FileAnalysis{}
	for _, list := range [][]review.FileAnalysis{a, b} {
		for _, f := range list {
			if old, ok := byPath[f.FilePath]; !ok || f.RequiresReview && !old.RequiresReview {
				byPath[f.FilePath] = f
			}
		}
	}
	out := make([]review.FileAnalysis, 0, len(byPath))
	for _, f := range byPath {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FilePath < out[j].FilePath })
	return out
}

// summary lists the flagged files with their line counts.
func summary(files []review.FileAnalysis) string {
	var b strings.Builder
	n := 0
	for _, f := range files {
		if !f.RequiresReview {
			continue
		}
		if n == maxListed {
			fmt.Fprintf(&b, "\n  ... and %d more (run azero gate)", len(review.Flagged(files))-maxListed)
			break
		}
		n++
		name := visible(f.FilePath)
		if f.OldPath != "" {
			name = visible(f.OldPath) + " => " + name
		}
		switch {
		case f.Binary:
			fmt.Fprintf(&b, "\n  %-8s %s (binary)", f.ChangeType, name)
		case f.ChangeType == review.Deleted:
			fmt.Fprintf(&b, "\n  %-8s %s (all %d lines removed)", f.ChangeType, name, f.OriginalLines)
		default:
			fmt.Fprintf(&b, "\n  %-8s %s (%d -> %d lines, -%d +%d, %.0f%% changed)", f.ChangeType, name,
				f.OriginalLines, f.LinesAfter(), f.LinesDeleted, f.LinesAdded, f.ChangeRatio*100)
		}
	}
	return b.String()
}

// visible quotes a path holding characters a reader would not see.
func visible(p string) string {
	for _, r := range p {
		if !strconv.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(p)
		}
	}
	return p
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
