package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

// TestEveryNamedInputIsBoundedAndStops: the files a command reads (the
// design, the brief, the edits, the content) may be anything a user can
// name: /dev/zero, a 200 MB file, a named pipe nobody writes to. The real
// azero refuses the first two at once, saying the limit, and the first
// Ctrl-C (SIGINT) stops a read that waits (exit 130), in every command.
func TestEveryNamedInputIsBoundedAndStops(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("needs /dev/zero")
	}
	repo := testenv.NewRepo(t, map[string]string{"calc.py": calcPy})
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.bin")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil { // sparse: 200 MB to read, nothing on disk
		t.Fatal(err)
	}
	f.Close()
	commands := []struct {
		name  string
		args  func(input string) []string
		limit string
	}{
		{"implement --lld", func(in string) []string { return []string{"implement", "--lld", in} }, "100 KiB"},
		{"issue --brief", func(in string) []string { return []string{"issue", "--brief", in} }, "1 MiB"},
		{"apply --edits", func(in string) []string { return []string{"apply", "calc.py", "--edits", in} }, "32 MiB"},
		{"write --content", func(in string) []string { return []string{"write", "new.py", "--content", in} }, "32 MiB"},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			for _, input := range []string{"/dev/zero", huge} {
				res := runAzeroIn(t, state, repo, []string{"AZERO_MOCK_LLM=1"}, c.args(input)...)
				if res.code != ExitError || !strings.Contains(res.stderr, input+" is larger than "+c.limit) {
					t.Errorf("%s: exit %d, want 1 naming the input and its limit (%s):\n%s", input, res.code, c.limit, res.stderr)
				}
			}
			// A named pipe nobody writes to: the read waits until Ctrl-C.
			pipe := filepath.Join(t.TempDir(), "pipe")
			if err := syscall.Mkfifo(pipe, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			cmd := exec.Command(os.Args[0], c.args(pipe)...)
			cmd.Dir, cmd.Env = repo, azeroEnv(state, "AZERO_MOCK_LLM=1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Wait until azero has opened the pipe for reading: a
			// writer's open then succeeds at once (O_NONBLOCK fails with
			// ENXIO while nobody reads).
			for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(10 * time.Millisecond) {
				if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					defer w.Close() // held open and silent: the read waits
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("azero never opened the pipe")
				}
			}
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				if code := exitCode(err); code != ExitInterrupted {
					t.Errorf("exit %d after one SIGINT, want %d", code, ExitInterrupted)
				}
			case <-time.After(testenv.Patience):
				cmd.Process.Kill()
				t.Fatal("one SIGINT did not stop the read")
			}
		})
	}
}
