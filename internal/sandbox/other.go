//go:build !linux && !darwin

package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
)

func (s *Sandbox) detect() error {
	return &UnavailableError{Reasons: []string{"azero has no sandbox for " + runtime.GOOS}, Advice: "run azero on Linux or macOS"}
}

func (j *Jail) command(ctx context.Context, argv, env []string) (*exec.Cmd, error) {
	return nil, errors.New("sandbox: no sandbox on " + runtime.GOOS)
}

func check(cfg Config) Report { return Report{OS: runtime.GOOS} }

func helperMain(args []string) int { return helperFail("no sandbox helper on %s", runtime.GOOS) }
