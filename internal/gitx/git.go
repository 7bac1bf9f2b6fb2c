// Package gitx runs the git binary for azero.
//
// Invariants:
//   - git is started directly through os/exec with an argument vector,
//     never through a shell, so no path or argument is ever interpreted.
//   - Paths are read from git only in its NUL-terminated (-z) formats or
//     from headers whose quoting is fixed by the arguments azero passes
//     (core.quotePath=true, explicit a/ and b/ prefixes); a path may hold
//     spaces, quotes, tabs, newlines or any byte but NUL.
//   - No program a repository's configuration names runs inside these
//     calls where configuration can prevent it: every git gets protective
//     configuration through its environment (see protection: no fsmonitor,
//     no hooks unless Repo.UserHooks, no signing program), and every diff,
//     log and show --no-ext-diff and --no-textconv. Filters and merge
//     drivers cannot be turned off this way; package integrity checks the
//     configuration that names them.
//   - Objects are requested by id (cat-file --batch), never by path, and
//     read as stored (GIT_NO_REPLACE_OBJECTS).
//   - A failed git command is an *Error carrying git's exit code and
//     standard error; it matches ErrNotRepository, ErrNoCommits and
//     ErrGitNotFound with errors.Is where those apply. A directory to run
//     in that is gone is reported as such (fs.ErrNotExist), never as a
//     missing git.
//   - Work trees survive a kill at any moment (see AddWorktree): what a
//     killed `git worktree add` leaves is recognised and made again, a
//     stale lock of azero's own branch is removed (see RefLockStaleAfter
//     for how staleness is decided), and git that creates a work tree runs
//     in a process group of its own, stopped as a whole on cancellation.
//
// The package knows git's formats; what the output means for azero (a
// review, a commit) is decided by the packages that use it.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sentinels matched by *Error (and by the errors of TopLevel and
// HasCommits) through errors.Is.
var (
	// ErrNotRepository: the directory is not inside a git work tree.
	ErrNotRepository = errors.New("not a git repository")
	// ErrNoCommits: the repository has no commit yet (HEAD is unborn).
	ErrNoCommits = errors.New("repository has no commits yet")
	// ErrGitNotFound: no git executable could be started.
	ErrGitNotFound = errors.New("git is not installed or not on PATH")
)

// Error reports a git command that failed.
type Error struct {
	Args     []string // git's arguments
	ExitCode int      // -1 when git did not run to completion
	Stderr   string   // git's standard error, trimmed
	Err      error    // the underlying error from os/exec
}

func (e *Error) Error() string {
	cmd := "git " + strings.Join(e.Args, " ")
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	msg := cmd + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Unwrap returns the os/exec error.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is recognise the package's sentinels from git's message.
// git is run with LC_ALL=C, so its messages are in English.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotRepository:
		return strings.Contains(e.Stderr, "not a git repository") || strings.Contains(e.Stderr, "must be run in a work tree")
	case ErrGitNotFound:
		return errors.Is(e.Err, exec.ErrNotFound) || errors.Is(e.Err, os.ErrNotExist) && !chdirFailed(e.Err)
	}
	return false
}

// chdirFailed reports an error of os/exec changing into the directory git
// should run in: the directory is missing, not git.
func chdirFailed(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "chdir"
}

// maxStderr bounds what is kept of git's standard error.
const maxStderr = 64 << 10

// Repo runs git in one directory. The zero Dir means the process's working
// directory.
type Repo struct {
	// Dir is the directory git runs in (its -C).
	Dir string
	// Env holds extra KEY=VALUE variables, applied after the process's
	// environment and the package's fixed settings, under the protective
	// configuration (see protection), which they cannot undo.
	Env []string
	// UserHooks lets git run the repository's own hooks, as the user's
	// `git commit` would: only for a commit azero makes in the user's
	// checkout on their behalf (the issue workflow's audit trail), never
	// in a run's work tree, whose hooks a test run could have planted.
	UserHooks bool
}

// environ is the process's environment plus settings that make git's
// behaviour independent of the user's terminal and locale: no credential
// prompts, no optional index lock (a read must not block or fail a
// concurrent `git commit`), English messages, the objects as stored (no
// replacement refs, which would show azero another commit than the one it
// merges); then the protective configuration (see protection), which
// nothing in r.Env can undo. except names a key of protection to leave
// out.
func (r Repo) environ(except string) []string {
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_NO_REPLACE_OBJECTS=1")
	env = append(env, r.Env...)
	return protect(env, except)
}

func (r Repo) command(ctx context.Context, args []string) *exec.Cmd {
	if r.UserHooks {
		return r.commandExcept(ctx, args, "core.hooksPath")
	}
	return r.commandExcept(ctx, args, "")
}

func (r Repo) commandExcept(ctx context.Context, args []string, except string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", noExternalDiff(args)...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ(except)
	// Children that keep a pipe open must not hang Wait after git exits.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (r Repo) fail(args []string, err error, stderr *boundedBuffer) error {
	e := &Error{Args: args, ExitCode: -1, Err: err}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		e.ExitCode = exitErr.ExitCode()
	}
	if stderr != nil {
		e.Stderr = strings.TrimSpace(stderr.buf.String())
	}
	if chdirFailed(err) {
		return fmt.Errorf("run git in %s: the directory is gone or unreadable (was it moved or deleted?): %w", r.Dir, e)
	}
	if errors.Is(e, ErrGitNotFound) {
		return fmt.Errorf("%w: install git (apt-get install git) and make sure it is on PATH", ErrGitNotFound)
	}
	return e
}

// Run runs git with args and returns its standard output. A non-zero exit
// is an *Error carrying git's standard error.
func (r Repo) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.run(ctx, r.command(ctx, args), args)
}

// runGroup is Run with git in a process group of its own, stopped as a
// whole when ctx is cancelled.
func (r Repo) runGroup(ctx context.Context, args ...string) ([]byte, error) {
	cmd := r.command(ctx, args)
	ownGroup(cmd)
	return r.run(ctx, cmd, args)
}

func (r Repo) run(ctx context.Context, cmd *exec.Cmd, args []string) ([]byte, error) {
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", firstArg(args), ctx.Err())
		}
		return stdout.Bytes(), r.fail(args, err, stderr)
	}
	return stdout.Bytes(), nil
}

func firstArg(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// Stream runs git with args while it works: stdin, when not nil, writes
// git's standard input from its own goroutine (the input is closed when
// it returns; its ctx is cancelled once git has exited or stdout failed),
// and stdout reads git's standard output as it is produced. Output that
// stdout leaves unread is discarded. If stdout returns an error, git is
// killed and that error is returned; otherwise a failed git is an *Error.
func (r Repo) Stream(ctx context.Context, stdin func(ctx context.Context, w io.Writer) error, stdout func(io.Reader) error, args ...string) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := r.command(sctx, args)
	stderr := &boundedBuffer{max: maxStderr}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", firstArg(args), err)
	}
	var in io.WriteCloser
	if stdin != nil {
		if in, err = cmd.StdinPipe(); err != nil {
			return fmt.Errorf("git %s: %w", firstArg(args), err)
		}
	}
	if err := cmd.Start(); err != nil {
		return r.fail(args, err, stderr)
	}
	inDone := make(chan error, 1)
	if stdin != nil {
		go func() {
			err := stdin(sctx, in)
			if cerr := in.Close(); err == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
				err = cerr
			}
			inDone <- err
		}()
	} else {
		inDone <- nil
	}

	outErr := stdout(out)
	if outErr != nil {
		cancel() // kills git
	} else {
		_, outErr = io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	cancel() // releases a stdin writer still waiting for input
	inErr := <-inDone

	// git that failed by itself (exit code > 0, not killed by us) explains
	// a truncated output better than the reader's complaint about it.
	var exitErr *exec.ExitError
	gitFailed := errors.As(waitErr, &exitErr) && exitErr.ExitCode() > 0
	switch {
	case outErr != nil && ctx.Err() == nil && !gitFailed:
		return outErr
	case ctx.Err() != nil:
		return fmt.Errorf("git %s: %w", firstArg(args), ctx.Err())
	case waitErr != nil:
		return r.fail(args, waitErr, stderr)
	case inErr != nil && !errors.Is(inErr, context.Canceled) && !errors.Is(inErr, syscall.EPIPE) && !errors.Is(inErr, os.ErrClosed):
		return fmt.Errorf("git %s: write input: %w", firstArg(args), inErr)
	}
	return nil
}

// TopLevel returns the root of the work tree that contains dir. Outside a
// repository the error matches ErrNotRepository and says what to do.
func TopLevel(ctx context.Context, dir string) (string, error) {
	if err := isDir(dir); err != nil {
		return "", err
	}
	out, err := Repo{Dir: dir}.Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", workTreeError(dir, err)
	}
	top := strings.TrimSuffix(string(out), "\n")
	if top == "" {
		// A bare repository or the inside of .git has no work tree.
		return "", noWorkTree(dir)
	}
	return top, nil
}

func isDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("repository directory: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("repository directory %s is not a directory", dir)
	}
	return nil
}

func noWorkTree(dir string) error {
	return fmt.Errorf("%s: %w: it has no work tree (a bare repository or a .git directory); run azero in a checkout", dir, ErrNotRepository)
}

// workTreeError explains a failure to find the work tree holding dir.
func workTreeError(dir string, err error) error {
	var ge *Error
	switch {
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree"):
		return noWorkTree(dir)
	case errors.Is(err, ErrNotRepository):
		return fmt.Errorf("%s: %w: run azero inside a git work tree (or point it at one), or create a repository with git init", dir, ErrNotRepository)
	}
	return err
}

// Checkout is the work tree holding a directory, as OpenCheckout found it.
type Checkout struct {
	Top          string // the root of the work tree
	Head         string // the commit HEAD names; "" before the first commit
	ObjectFormat string // the repository's hash function: "sha1" or "sha256"
}

// Unborn reports a repository whose first commit has not been made.
func (c Checkout) Unborn() bool { return c.Head == "" }

// EmptyTree returns the id of the tree with nothing in it, which git knows
// without storing it: what a first commit is compared with.
func (c Checkout) EmptyTree() string {
	if c.ObjectFormat == "sha256" {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}

// OpenCheckout finds the work tree holding dir, its HEAD commit and its
// object format with one git process. A repository without commits is not
// an error: its Head is "". Outside a work tree the error matches
// ErrNotRepository and says what to do.
func OpenCheckout(ctx context.Context, dir string) (Checkout, error) {
	if err := isDir(dir); err != nil {
		return Checkout{}, err
	}
	out, err := Repo{Dir: dir}.Run(ctx, "rev-parse", "--show-toplevel", "--show-object-format", "--verify", "--quiet", "HEAD^{commit}")
	var ge *Error
	unborn := errors.As(err, &ge) && ge.ExitCode == 1
	if err != nil && !unborn {
		return Checkout{}, workTreeError(dir, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := 3
	if unborn {
		want = 2
	}
	// An older git prints no top level for a bare repository.
	if len(lines) != want || lines[0] == "" {
		return Checkout{}, noWorkTree(dir)
	}
	c := Checkout{Top: lines[0], ObjectFormat: lines[1]}
	if c.ObjectFormat != "sha1" && c.ObjectFormat != "sha256" {
		return Checkout{}, &MalformedError{0, "unknown object format " + strconv.Quote(c.ObjectFormat)}
	}
	if !unborn {
		if c.Head = lines[2]; !isHex(c.Head) {
			return Checkout{}, &MalformedError{0, "HEAD is not an object id: " + strconv.Quote(c.Head)}
		}
	}
	return c, nil
}

// HasCommits reports whether HEAD names a commit (false in a repository
// whose first commit has not been made).
func (r Repo) HasCommits(ctx context.Context) (bool, error) {
	_, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// ZeroID reports whether id is git's all-zero object id (the "no object"
// of raw diff output: a side that is absent or not yet hashed).
func ZeroID(id string) bool {
	return id != "" && strings.Trim(id, "0") == ""
}
