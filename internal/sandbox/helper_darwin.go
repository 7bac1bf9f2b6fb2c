//go:build darwin

package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// helperMain sets the rlimits (the size of a written file, no core dumps;
// RLIMIT_NPROC counts every process of the user on macOS, so it is left)
// and execs the command inside the Seatbelt sandbox it was started in.
func helperMain(args []string) int {
	verb, spec, argv, err := parseHelper(args)
	if err != nil {
		return helperFail("%v", err)
	}
	if verb != "run" {
		return helperFail("unknown verb %q", verb)
	}
	if spec.Dir != "" {
		if err := syscall.Chdir(spec.Dir); err != nil {
			return helperFail("enter %s: %v", spec.Dir, err)
		}
	}
	limits := []struct {
		res int
		n   uint64
	}{{syscall.RLIMIT_CORE, 0}}
	if spec.MaxFileSize > 0 {
		limits = append(limits, struct {
			res int
			n   uint64
		}{syscall.RLIMIT_FSIZE, uint64(spec.MaxFileSize)})
	}
	for _, l := range limits {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(l.res, &cur); err != nil {
			return helperFail("limits: %v", err)
		}
		lim := syscall.Rlimit{Cur: min(l.n, cur.Max), Max: min(l.n, cur.Max)}
		if err := syscall.Setrlimit(l.res, &lim); err != nil {
			return helperFail("limits: %v", err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	os.Stderr.WriteString("azero sandbox: " + argv[0] + ": " + err.Error() + "\n")
	return 127
}
