package runs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The Temporal engine is in every build but a lean one (the lean tag: the
// release's azero): its SDK and the Temporal API's protobuf registrations
// cost every command, `azero version` and the pre-commit gate included,
// about 3.5 ms of start-up (more than all the rest of azero) and 12 MB of
// the binary (scripts/bench-startup.sh). A lean build hands a command
// whose engine is temporal to azero-temporal, a build with the engine,
// found next to this executable or on the PATH (handOff below).

// TemporalCommand is the executable holding the Temporal engine, for a
// build without it.
const TemporalCommand = "azero-temporal"

// HandOffVar marks a process started by a hand-off, so that a build
// without the engine installed as azero-temporal fails instead of
// handing the command on forever.
const HandOffVar = "AZERO_HANDED_OFF"

// TemporalMissingError says that this build has no Temporal engine and no
// azero-temporal was found to hand the command to.
type TemporalMissingError struct {
	Dir string // the directory of this executable, looked in first
}

func (e *TemporalMissingError) Error() string {
	return fmt.Sprintf("the Temporal engine is not in this build of azero, and no %s was found next to it (in %s) or on the PATH: "+
		"install the release's %s-OS-ARCH as %s next to azero, or a build with the engine: go install github.com/azero-dev/azero/cmd/azero@latest",
		TemporalCommand, e.Dir, TemporalCommand, TemporalCommand)
}

// findTemporal finds azero-temporal: next to this executable (after
// resolving symlinks, so a linked azero finds the release's pair), else on
// the PATH.
func (e *Env) findTemporal() (string, error) {
	exe, _ := os.Executable()
	p, dir := temporalNextTo(exe)
	if p != "" {
		return p, nil
	}
	if p, err := e.LookPath(TemporalCommand); err == nil {
		return p, nil
	}
	return "", &TemporalMissingError{Dir: dir}
}

// temporalNextTo returns the executable azero-temporal in the directory of
// exe (symlinks resolved), and that directory.
func temporalNextTo(exe string) (path, dir string) {
	if exe == "" {
		return "", ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir = filepath.Dir(exe)
	p := filepath.Join(dir, TemporalCommand)
	if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return p, dir
	}
	return "", dir
}

// handOff runs this command line in azero-temporal instead, with the same
// arguments, environment, standard streams and (on Unix) process: it
// returns only when that cannot happen.
func (e *Env) handOff() error {
	if e.Getenv(HandOffVar) != "" {
		return errors.New("the Temporal engine is not in this build of azero, which was itself started as " + TemporalCommand +
			": install a build with the engine as " + TemporalCommand + " (go build -o " + TemporalCommand + " ./cmd/azero)")
	}
	path, err := e.findTemporal()
	if err != nil {
		return err
	}
	if e.Exec == nil {
		return errors.New("this azero cannot hand the command to " + path)
	}
	argv := append([]string{path}, e.Args...)
	return e.Exec(path, argv, append(e.Environ(), HandOffVar+"=1"))
}
