package safewrite_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

// The test binary doubles as the helper processes of the crash and
// failure tests: re-executed with SAFEWRITE_HELPER set, it runs the helper
// instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("SAFEWRITE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "crash":
		os.Exit(crashHelper())
	case "fsize":
		os.Exit(fsizeHelper())
	default:
		fmt.Fprintln(os.Stderr, "unknown SAFEWRITE_HELPER")
		os.Exit(2)
	}
}

// crashContent returns one of the two contents the crash helper
// alternates between: 256 KB, of equal length, differing on every 500th line so that a mix
// of the two would be seen, and alike elsewhere so that the analysis
// before each write stays short next to the write itself.
func crashContent(which int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 256<<10; i++ {
		v := 0
		if i%500 == 0 {
			v = which
		}
		fmt.Fprintf(&b, "line %06d of version %d: %s\n", i, v, strings.Repeat(string(rune('a'+v)), 40))
	}
	return b.Bytes()
}

// crashHelper says "ready", then writes the two contents alternately to
// one file, forever.
func crashHelper() int {
	root, path := os.Getenv("SAFEWRITE_ROOT"), os.Getenv("SAFEWRITE_PATH")
	w := &safewrite.Writer{Auto: true, Force: true}
	ctx := context.Background()
	contents := [][]byte{crashContent(0), crashContent(1)}
	fmt.Println("ready")
	for i := 1; ; i++ {
		if _, err := w.Write(ctx, safewrite.Request{Root: root, Path: path, Content: contents[i%2], Actor: "crash-helper"}); err != nil {
			fmt.Println("error:", err)
			return 1
		}
	}
}

// TestCrashNeverLeavesPartialContent kills a writing process with SIGKILL
// at random moments, hundreds of times: the file must always hold one
// whole version, never a mix or a truncation.
func TestCrashNeverLeavesPartialContent(t *testing.T) {
	if testing.Short() {
		t.Skip("kills hundreds of processes")
	}
	p := newProject(t)
	a, b := crashContent(0), crashContent(1)
	writeFile(t, p.path("data/big.txt"), string(a))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kills := 300
	if raceEnabled {
		kills = 50 // the process crash is what is tested here, not data races
	}
	deadline := time.Now().Add(testenv.Patience) // generous: the machine may be busy
	partial := 0
	for i := range kills {
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills within the time limit", i)
		}
		leftovers := map[string]bool{}
		for _, name := range tempFiles(t, p.path("data")) {
			leftovers[name] = true
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "SAFEWRITE_HELPER=crash", "SAFEWRITE_ROOT="+p.root, "SAFEWRITE_PATH=data/big.txt")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			ready <- line
		}()
		select {
		case line := <-ready:
			if line != "ready\n" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("helper said %q", line)
			}
		case <-time.After(testenv.Patience):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("helper never became ready")
		}
		// Three kills in four wait until the helper is inside a write (its
		// temporary file exists) and strike a moment later, in the middle
		// of writing, syncing or renaming; the fourth strikes at any time.
		if i%4 != 3 {
			waitForTempFile(t, p.path("data"), leftovers)
		}
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()

		got, err := os.ReadFile(p.path("data/big.txt"))
		if err != nil {
			t.Fatalf("kill %d: the target is gone: %v", i, err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("kill %d: the target holds %d bytes that are neither version", i, len(got))
		}
		if len(tempFiles(t, p.path("data"))) > 0 {
			partial++
		}
	}
	t.Logf("%d kills; %d landed inside a write and left a temporary file for the next write to remove", kills, partial)
	if partial < kills/10 {
		t.Errorf("only %d kills landed inside a write: the test hardly exercised anything", partial)
	}

	// The next write removes the leftovers of the killed processes.
	if _, err := (&safewrite.Writer{Force: true}).Write(t.Context(), safewrite.Request{Root: p.root, Path: "data/big.txt", Content: []byte("done\n")}); err != nil {
		t.Fatal(err)
	}
	if left := tempFiles(t, p.path("data")); len(left) > 0 {
		t.Fatalf("leftover temporary files were not cleaned up: %v", left)
	}
}

// waitForTempFile waits until a new temporary file (not one of old) shows
// up in dir.
func waitForTempFile(t *testing.T, dir string, old map[string]bool) {
	t.Helper()
	for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline); {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".azero-tmp-") && !old[e.Name()] {
				return
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatal("the helper never started a write")
}

// fsizeHelper writes with a file size limit of 4 KB, so the write of a
// larger content fails half way with EFBIG.
func fsizeHelper() int {
	lim := syscall.Rlimit{Cur: 4096, Max: 4096}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		return 2
	}
	content := bytes.Repeat([]byte("new content line\n"), 4000)
	w := &safewrite.Writer{Force: true}
	_, err := w.Write(context.Background(), safewrite.Request{Root: os.Getenv("SAFEWRITE_ROOT"), Path: os.Getenv("SAFEWRITE_PATH"), Content: content})
	if err == nil {
		fmt.Println("wrote")
		return 1
	}
	fmt.Println("error:", err)
	return 0
}

// TestAtomicWriteFailure (scenario 150): a real write failing half way
// (the file size limit is reached after 4 KB) leaves the original intact
// and no temporary file.
func TestAtomicWriteFailure(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	old := numbered("original", 1, 150)
	writeFile(t, p.path("pkg/state.py"), old)
	if err := os.Chmod(p.path("pkg/state.py"), 0o640); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SAFEWRITE_HELPER=fsize", "SAFEWRITE_ROOT="+p.root, "SAFEWRITE_PATH=pkg/state.py")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Fatalf("the write did not fail on the size limit: %s", out)
	}
	if got := readFile(t, p.path("pkg/state.py")); got != old {
		t.Fatalf("the original was damaged: %d bytes", len(got))
	}
	fi, _ := os.Stat(p.path("pkg/state.py"))
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v", fi.Mode().Perm())
	}
	if tmp := tempFiles(t, p.path("pkg")); len(tmp) > 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}
