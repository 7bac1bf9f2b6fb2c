package gitx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain isolates every git the tests and the code under test start
// from the user's and the system's configuration.
func TestMain(m *testing.M) {
	for _, kv := range testenv.GitEnv(nil) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTopLevelAndHasCommits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo := testenv.NewRepo(t, map[string]string{"sub/dir/a.txt": "a\n"})
	top, err := gitx.TopLevel(ctx, filepath.Join(repo, "sub", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(repo)
	if got, _ := filepath.EvalSymlinks(top); got != want {
		t.Errorf("TopLevel = %s, want %s", top, repo)
	}
	if ok, err := (gitx.Repo{Dir: repo}).HasCommits(ctx); err != nil || !ok {
		t.Errorf("HasCommits = %v, %v; want true", ok, err)
	}

	empty := t.TempDir()
	testenv.Git(t, empty, "init", "-q")
	if ok, err := (gitx.Repo{Dir: empty}).HasCommits(ctx); err != nil || ok {
		t.Errorf("HasCommits of a repository without commits = %v, %v; want false, nil", ok, err)
	}

	outside := t.TempDir()
	_, err = gitx.TopLevel(ctx, outside)
	if !errors.Is(err, gitx.ErrNotRepository) {
		t.Fatalf("TopLevel outside git: err = %v, want ErrNotRepository", err)
	}
	if !strings.Contains(err.Error(), "git init") {
		t.Errorf("error %q does not say what to do", err)
	}
	if _, err := gitx.TopLevel(ctx, filepath.Join(outside, "missing")); err == nil {
		t.Error("TopLevel of a missing directory succeeded")
	}
	if _, err := gitx.TopLevel(ctx, filepath.Join(repo, ".git")); !errors.Is(err, gitx.ErrNotRepository) {
		t.Errorf("TopLevel inside .git: err = %v, want ErrNotRepository", err)
	}
}

func TestRunErrorCarriesStderr(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	_, err := gitx.Repo{Dir: repo}.Run(t.Context(), "rev-parse", "--verify", "no-such-branch")
	var ge *gitx.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v (%T), want *gitx.Error", err, err)
	}
	if ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "Needed a single revision") {
		t.Errorf("Error = %+v, want exit 128 and git's message", ge)
	}
	if !strings.Contains(err.Error(), "rev-parse") || !strings.Contains(err.Error(), "Needed a single revision") {
		t.Errorf("message %q lacks the command or git's words", err)
	}
}

func TestRunNeverUsesAShell(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	marker := filepath.Join(t.TempDir(), "pwned")
	// With a shell this would create the marker file.
	_, err := gitx.Repo{Dir: repo}.Run(t.Context(), "log", "--format=%H", "--", "$(touch "+marker+")", "`touch "+marker+"`")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an argument was interpreted by a shell")
	}
}

func TestStreamStopsGitWhenTheReaderFails(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	boom := errors.New("boom")
	// cat-file --batch waits for input forever unless killed.
	err := gitx.Repo{Dir: repo}.Stream(t.Context(), func(ctx context.Context, w io.Writer) error {
		<-ctx.Done()
		return ctx.Err()
	}, func(r io.Reader) error { return boom }, "cat-file", "--batch")
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's error (a git left running would hang here)", err)
	}
}

func TestStreamReportsGitFailureOverTruncatedOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // not a repository
	err := gitx.Repo{Dir: dir}.Stream(t.Context(), nil, func(r io.Reader) error {
		b, _ := io.ReadAll(r)
		if len(b) == 0 {
			return errors.New("no output")
		}
		return nil
	}, "log", "-z", "HEAD")
	if !errors.Is(err, gitx.ErrNotRepository) {
		t.Fatalf("err = %v, want git's own failure (not a repository)", err)
	}
}

func TestStreamCancelled(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := gitx.Repo{Dir: repo}.Stream(ctx, func(ctx context.Context, w io.Writer) error {
		<-ctx.Done()
		return ctx.Err()
	}, func(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err }, "cat-file", "--batch")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}

func TestCatFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo := testenv.NewRepo(t, map[string]string{"a": "one\ntwo\n", "b": "no newline", "empty": ""})
	r := gitx.Repo{Dir: repo}
	out, err := r.Run(ctx, "rev-parse", "HEAD:a", "HEAD:b", "HEAD:empty", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(out))
	missing := strings.Repeat("1", len(ids[0]))
	ch := make(chan string, 8)
	for _, id := range append(ids, missing, ids[0]) {
		ch <- id
	}
	close(ch)
	var got []string
	err = r.CatFile(ctx, ch, func(obj gitx.Object, content io.Reader) error {
		b, err := io.ReadAll(content)
		if err != nil {
			return err
		}
		got = append(got, fmt.Sprintf("%s %v %d %q", obj.Type, obj.Missing, obj.Size, b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`blob false 8 "one\ntwo\n"`, `blob false 10 "no newline"`, `blob false 0 ""`,
		"commit false", ` true 0 ""`, `blob false 8 "one\ntwo\n"`}
	if len(got) != len(want) {
		t.Fatalf("got %d objects %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("object %d = %s, want %s", i, got[i], want[i])
		}
	}
}

func TestCatFileUnreadContentIsSkipped(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": strings.Repeat("x\n", 100000), "b": "b\n"})
	r := gitx.Repo{Dir: repo}
	out, err := r.Run(t.Context(), "rev-parse", "HEAD:a", "HEAD:b")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 2)
	for _, id := range strings.Fields(string(out)) {
		ch <- id
	}
	close(ch)
	var sizes []int64
	err = r.CatFile(t.Context(), ch, func(obj gitx.Object, content io.Reader) error {
		sizes = append(sizes, obj.Size) // reads nothing
		return nil
	})
	if err != nil || !slices.Equal(sizes, []int64{200000, 2}) {
		t.Fatalf("sizes = %v, err = %v; want [200000 2]", sizes, err)
	}
}

// TestListUntrackedAndUnmerged: one ls-files tells untracked paths (odd
// names, a nested repository, not the ignored ones) from conflicted ones.
func TestListUntrackedAndUnmerged(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"a.txt": "base\n", ".gitignore": "*.log\n"})
	testenv.Git(t, dir, "checkout", "-q", "-b", "other")
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "theirs\n"})
	testenv.Git(t, dir, "commit", "-qam", "theirs")
	testenv.Git(t, dir, "checkout", "-q", "-")
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "ours\n"})
	testenv.Git(t, dir, "commit", "-qam", "ours")
	cmd := exec.Command("git", "merge", "-q", "other")
	cmd.Dir, cmd.Env = dir, testenv.GitEnv(os.Environ())
	if err := cmd.Run(); err == nil {
		t.Fatal("the merge did not conflict")
	}
	testenv.WriteFiles(t, dir, map[string]string{"new\tfile.txt": "n\n", "x.log": "ignored\n", "? q.txt": "q\n"})
	testenv.Git(t, filepath.Join(dir), "init", "-q", "nested")
	testenv.WriteFiles(t, dir, map[string]string{"nested/inner.txt": "i\n"})
	l, err := gitx.Repo{Dir: dir}.ListUntrackedAndUnmerged(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(l.Untracked, "|"), "? q.txt|nested/|new\tfile.txt"; got != want {
		t.Errorf("untracked %q, want %q", got, want)
	}
	if got := strings.Join(l.Unmerged, "|"); got != "a.txt" {
		t.Errorf("unmerged %q, want a.txt once", got)
	}
}
