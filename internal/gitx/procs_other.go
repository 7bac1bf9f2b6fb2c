//go:build !linux

package gitx

// gitProcesses cannot list processes here: every ref lock younger than
// RefLockStaleAfter counts as possibly held.
func gitProcesses() ([]process, bool) { return nil, false }
