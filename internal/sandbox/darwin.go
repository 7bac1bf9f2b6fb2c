//go:build darwin

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"slices"
)

// sandboxExec is macOS's own Seatbelt command.
const sandboxExec = "/usr/bin/sandbox-exec"

func (s *Sandbox) detect() error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return &UnavailableError{Reasons: []string{sandboxExec + " is missing"}, Advice: "restore macOS's sandbox-exec"}
	}
	s.mech = mechSeatbelt
	return nil
}

// command runs the helper (which sets the rlimits and execs argv) under
// sandbox-exec with the jail's profile. Without a pid namespace, a process
// the command detached from its process group outlives a kill of the group.
func (j *Jail) command(ctx context.Context, argv, env []string) (*exec.Cmd, error) {
	s := j.s
	p := j.plan(argv[0], env)
	var read []string
	for _, r := range p.roots {
		if r.link == "" {
			read = append(read, r.path)
		}
	}
	read = slices.Concat(read, p.read, []string{s.cfg.Executable})
	profile := SeatbeltProfile(SeatbeltPolicy{Read: read, Write: p.write, Deny: p.hidden, Network: s.cfg.Network})
	spec := helperSpec{Mode: modeSeatbelt, Dir: p.dir, MaxFileSize: s.cfg.MaxFileSize}
	args, err := helperArgs(spec, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, sandboxExec, append([]string{"-p", profile, s.cfg.Executable}, args...)...)
	cmd.Dir, cmd.Env = p.dir, env
	return cmd, nil
}

func check(cfg Config) Report {
	_, err := os.Stat(sandboxExec)
	return Report{OS: "darwin", Seatbelt: err == nil}
}
