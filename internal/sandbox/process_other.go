//go:build !unix

package sandbox

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

// processAlive cannot tell here: every process counts as alive, so Sweep
// removes nothing.
func processAlive(int) bool { return true }
