//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own and makes cancelling
// it send SIGTERM to the whole group: git and the git processes it runs
// (a `git worktree add` runs `git branch` and `git reset --hard`) stop
// together and clean up after themselves, instead of the children
// finishing unseen after their parent was killed.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}
