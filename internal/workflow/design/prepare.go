package design

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/slug"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// Inputs are what a human asks `azero design` for: an issue by number
// (read from Reader) or a brief, and the configuration.
type Inputs struct {
	Dir string // a directory inside the repository

	// Issue is the issue's number; Reader reads it (GitHub or the local
	// tracker) and TrackerName names that tracker as `azero issue`
	// records it ("github OWNER/NAME", "local DIR"), to find the trail of
	// an issue it filed.
	Issue       int
	Reader      tracker.Reader
	TrackerName string
	// BriefPath and Brief are a problem statement that is not an issue
	// (read by the caller, bounded); its file name names the design.
	BriefPath string
	Brief     []byte

	Config config.Config // [issue] audit_dir and [design] lld_dir
	// Drafter and Reviewer are the models the run will use, as
	// provider:model (the scripted model when the run is mocked).
	Drafter, Reviewer string
	// MockScript is the scripted model's script when a role is mocked;
	// the run keeps it for every resume.
	MockScript string
	// Implement, when set (--implement), makes the run go on into the
	// implementation of the committed design.
	Implement *ImplementPlan
}

// InputError marks inputs that are wrong as given (a usage error, exit 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// maxTitleSlug bounds the title's part of a design's file name.
const maxTitleSlug = 48

// Prepare checks the inputs and builds a run's initial state without
// changing anything and without calling a model: the repository, the
// issue read from its tracker (and the trail `azero issue` left for it)
// or the brief, the directories, and where the design will be committed:
// LLDDir/NNN-slug.md, NNN the issue's number (three digits at least),
// slug its title's; a brief's design is LLDDir/<its file's name>.md. A
// design already there, an unfinished run's trail for it, or the trail of
// one committed before (in done/), is refused.
func Prepare(ctx context.Context, in Inputs) (*State, error) {
	top, err := gitx.TopLevel(ctx, in.Dir)
	if err != nil {
		return nil, fmt.Errorf("azero design commits the design and its audit trail to a git repository; run it inside one: %w", err)
	}
	hasBrief := in.BriefPath != "" || len(in.Brief) > 0
	switch {
	case in.Issue > 0 && hasBrief:
		return nil, inputErrorf("give the issue (--issue) or a brief (--brief), not both")
	case in.Issue <= 0 && !hasBrief:
		return nil, inputErrorf("name the issue to design for (--issue N) or a brief (--brief FILE)")
	}
	auditDir, err := repoRelDir("issue.audit_dir", in.Config.Issue.AuditDir, DefaultAuditDir)
	if err != nil {
		return nil, err
	}
	lldDir, err := repoRelDir("design.lld_dir", in.Config.Design.LLDDir, DefaultLLDDir)
	if err != nil {
		return nil, err
	}
	s := &State{Root: top, AuditDir: auditDir, Drafter: in.Drafter, Reviewer: in.Reviewer, MockScript: in.MockScript, Implement: in.Implement}
	var name string
	if in.Issue > 0 {
		is, err := readIssue(ctx, in, top, auditDir)
		if err != nil {
			return nil, err
		}
		s.Issue, s.Title = is, is.Title
		name = fmt.Sprintf("%03d-%s", is.Number, cmp.Or(slug.Make(is.Title, maxTitleSlug), "design"))
	} else {
		if strings.TrimSpace(string(in.Brief)) == "" {
			return nil, fmt.Errorf("the brief %s is empty: write the problem statement first", in.BriefPath)
		}
		if name = issue.SlugFromFile(in.BriefPath); name == "" {
			return nil, inputErrorf("cannot name a design after the file %q: rename the brief using letters, digits and hyphens", filepath.Base(in.BriefPath))
		}
		if s.BriefPath, err = filepath.Abs(in.BriefPath); err != nil {
			return nil, err
		}
		s.Brief, s.Title = string(in.Brief), briefTitle(string(in.Brief), name)
	}
	s.LLDPath, s.Slug = path.Join(lldDir, name+".md"), "design-"+name
	if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(s.LLDPath))); err == nil {
		return nil, fmt.Errorf("%s exists already: implement it (azero implement --lld %s), or move it away to design again", s.LLDPath, s.LLDPath)
	}
	if info, err := os.Stat(filepath.Join(top, filepath.FromSlash(s.ActiveDir()))); err == nil && info.IsDir() {
		return nil, fmt.Errorf("an unfinished design run for %s keeps its trail in %s/: resume it (azero design --resume %s), or remove the directory to start again",
			s.LLDPath, s.ActiveDir(), s.Slug)
	}
	// A design committed before and moved away leaves its trail in done/:
	// the new run's trail could not move there, and the run would fail at
	// its commit after every draft, review and gate.
	if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(s.DoneDir()))); err == nil {
		return nil, fmt.Errorf("a design for %s was committed before, with its audit trail in %s/: move that trail away (git mv) to design again",
			s.LLDPath, s.DoneDir())
	}
	if in.Implement != nil && strings.TrimSpace(in.Implement.Coder) == "" {
		return nil, inputErrorf("--implement needs the coder model: set [models] coder in the config or pass --coder")
	}
	return s, nil
}

// readIssue reads the issue from its tracker and finds the trail of an
// issue `azero issue` filed.
func readIssue(ctx context.Context, in Inputs, root, auditDir string) (*Issue, error) {
	if in.Reader == nil {
		return nil, errors.New("no tracker to read the issue from")
	}
	got, err := in.Reader.Get(ctx, in.Issue)
	if err != nil {
		if errors.Is(err, tracker.ErrNoIssue) {
			return nil, &InputError{Err: err}
		}
		return nil, err
	}
	is := &Issue{Number: got.Number, Title: strings.TrimSpace(got.Title), Body: tracker.WithoutMarker(got.Body), URL: got.URL,
		Labels: got.Labels, State: got.State, Tracker: in.TrackerName}
	if is.Title == "" {
		is.Title = fmt.Sprintf("Issue %d", got.Number)
	}
	run, _ := tracker.MarkedRun(got.Body)
	if run != "" && in.TrackerName != "" {
		filed, ok, err := issue.FiledTrail(root, auditDir, got.Number, in.TrackerName, run)
		if err != nil {
			return nil, err
		}
		if ok {
			is.Trail, is.FiledBy = filed.Dir, filed.RunID
		}
	}
	return is, nil
}

// briefTitle is a brief's first line, as a title; the file's name when it
// has none.
func briefTitle(brief, name string) string {
	for _, l := range strings.Split(brief, "\n") {
		if t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#")); t != "" {
			if r := []rune(t); len(r) > 72 {
				t = strings.TrimSpace(string(r[:72]))
			}
			return t
		}
	}
	return name
}

// repoRelDir validates a configured directory: relative, inside the
// repository, slash-separated; def when unset.
func repoRelDir(key, dir, def string) (string, error) {
	if dir == "" {
		dir = def
	}
	d := path.Clean(filepath.ToSlash(dir))
	if d == "." || path.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") || filepath.IsAbs(dir) {
		return "", inputErrorf("config %s %q: must be a directory inside the repository, relative to its root", key, dir)
	}
	return d, nil
}
