//go:build !unix

package gitx

import "os/exec"

// ownGroup leaves cmd as it is where process groups do not exist.
func ownGroup(cmd *exec.Cmd) {}
