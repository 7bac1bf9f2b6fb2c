// Command benchcmd times two commands side by side and prints the ratio of
// their median wall times, for scripts/bench-startup.sh.
//
//	benchcmd [-n 30] [-C dir] [-max 3] -name NAME -- CMD A... -- CMD B...
//
// The runs alternate (A, B, A, B, ...) after one warm-up run of each, so a
// machine that gets busier or quieter mid-run affects both sides alike.
// Each run is started with os.StartProcess (no shell), with stdin, stdout and
// stderr on /dev/null, and timed from just before the start to just after
// the wait; that overhead is the same for both sides. A run that exits with
// an unexpected code stops the benchmark: a fast failure is not a fast
// command.
//
// Output, one line: the name, each side's median wall time and peak RSS,
// the ratio A/B and, with -max, whether the ratio is within it. The exit
// code is 1 when the ratio is above -max.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmd:", err)
		if errors.Is(err, errOverTarget) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

var errOverTarget = errors.New("over target")

type side struct {
	argv   []string
	wall   []time.Duration
	cpu    []time.Duration
	rssKiB []int64
}

func run(args []string) error {
	fs := flag.NewFlagSet("benchcmd", flag.ContinueOnError)
	n := fs.Int("n", 30, "timed runs of each command")
	dir := fs.String("C", "", "run the commands in this directory")
	maxRatio := fs.Float64("max", 0, "fail (exit 1) when median(A)/median(B) is above this; 0: report only")
	name := fs.String("name", "", "what is measured, for the output line")
	codeA := fs.Int("code-a", 0, "the exit code A must return")
	codeB := fs.Int("code-b", 0, "the exit code B must return")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, b, err := splitCommands(fs.Args())
	if err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("-n must be at least 1, got %d", *n)
	}
	sides := []*side{{argv: a}, {argv: b}}
	codes := []int{*codeA, *codeB}
	for i, s := range sides {
		path, err := exec.LookPath(s.argv[0])
		if err != nil {
			return fmt.Errorf("find %s: %w", s.argv[0], err)
		}
		s.argv[0] = path
		if _, _, _, err := once(s.argv, *dir, codes[i]); err != nil { // warm-up: page cache, git's index
			return err
		}
	}
	for range *n {
		for i, s := range sides {
			wall, cpu, rss, err := once(s.argv, *dir, codes[i])
			if err != nil {
				return err
			}
			s.wall = append(s.wall, wall)
			s.cpu = append(s.cpu, cpu)
			s.rssKiB = append(s.rssKiB, rss)
		}
	}
	ma, mb := median(sides[0].wall), median(sides[1].wall)
	ratio := float64(ma) / float64(mb)
	verdict := ""
	if *maxRatio > 0 {
		verdict = fmt.Sprintf("  target <= %.1fx: ok", *maxRatio)
		if ratio > *maxRatio {
			verdict = fmt.Sprintf("  target <= %.1fx: OVER", *maxRatio)
		}
	}
	fmt.Printf("%-30s %9s (cpu %9s, %5.1f MiB) | %9s (cpu %9s, %5.1f MiB) | ratio %5.2fx%s\n",
		*name, round(ma), round(median(sides[0].cpu)), mib(median(sides[0].rssKiB)),
		round(mb), round(median(sides[1].cpu)), mib(median(sides[1].rssKiB)), ratio, verdict)
	if *maxRatio > 0 && ratio > *maxRatio {
		return fmt.Errorf("%s: %.2fx %w %.1fx", *name, ratio, errOverTarget, *maxRatio)
	}
	return nil
}

// splitCommands splits "-- A... -- B..." (the first "--" may have been
// eaten by the flag package).
func splitCommands(args []string) (a, b []string, err error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	i := slices.Index(args, "--")
	if i <= 0 || i == len(args)-1 {
		return nil, nil, errors.New("usage: benchcmd [flags] -- CMD A... -- CMD B...")
	}
	return slices.Clone(args[:i]), slices.Clone(args[i+1:]), nil
}

// once runs argv and returns its wall time, CPU time (user + system) and
// peak RSS in KiB.
func once(argv []string, dir string, wantCode int) (wall, cpu time.Duration, rssKiB int64, err error) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer null.Close()
	attr := &os.ProcAttr{Dir: dir, Files: []*os.File{null, null, null}}
	start := time.Now()
	p, err := os.StartProcess(argv[0], argv, attr)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("start %v: %w", argv, err)
	}
	st, err := p.Wait()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("wait for %v: %w", argv, err)
	}
	if st.ExitCode() != wantCode {
		return 0, 0, 0, fmt.Errorf("%v exited %d, want %d: run it by hand to see why", argv, st.ExitCode(), wantCode)
	}
	cpu = st.UserTime() + st.SystemTime()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		rssKiB = int64(ru.Maxrss) // KiB on Linux, bytes on macOS
		if runtime.GOOS == "darwin" {
			rssKiB /= 1024
		}
	}
	return wall, cpu, rssKiB, nil
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func round(d time.Duration) string {
	return d.Round(10 * time.Microsecond).String()
}
