package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
)

// helperArg is the first argument of the helper's command line:
// `EXE __azero-sandbox run SPEC -- COMMAND ARGS...` or
// `EXE __azero-sandbox probe`.
const helperArg = "__azero-sandbox"

// Init turns this process into the sandbox's helper when it was started as
// one, and never returns then; otherwise it returns at once, having made
// one comparison. Call it first in main, and in TestMain of every package
// whose tests start sandboxed processes (the test binary is the helper
// there).
func Init() {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
}

// Helper modes: how the helper was started.
const (
	modeBwrap    = "bwrap"    // by bubblewrap, as pid 1 of its namespaces
	modeUserns   = "userns"   // by azero, as pid 1 of new user, mount, pid (and network) namespaces
	modeLandlock = "landlock" // by azero, without namespaces
	modeSeatbelt = "seatbelt" // by sandbox-exec
	modeOff      = "off"      // unconfined but for the rlimits
)

// helperSpec is what the helper sets up before it runs the command.
type helperSpec struct {
	Mode string `json:"mode"`
	Dir  string `json:"dir,omitempty"` // the working directory, entered again after the mounts

	// Landlock (ABI > 0): read and execute Read, list List, read, write
	// and execute Write, read and write the device files Devices; deny TCP
	// bind and connect entirely with DenyTCP.
	Landlock bool     `json:"landlock,omitempty"`
	Read     []string `json:"read,omitempty"`
	List     []string `json:"list,omitempty"`
	Write    []string `json:"write,omitempty"`
	Devices  []string `json:"devices,omitempty"`
	DenyTCP  bool     `json:"deny_tcp,omitempty"`

	// Mounts, in order (modeUserns).
	Mounts   []mountOp `json:"mounts,omitempty"`
	Loopback bool      `json:"loopback,omitempty"`

	MaxProcesses int   `json:"max_processes,omitempty"` // RLIMIT_NPROC; 0 leaves it
	MaxFileSize  int64 `json:"max_file_size,omitempty"` // RLIMIT_FSIZE; 0 leaves it
	// Watch kills every process of the pid namespace when more than
	// MaxProcesses run (root, whom RLIMIT_NPROC does not bind).
	Watch bool `json:"watch,omitempty"`
	// NprocAbove: RLIMIT_NPROC counts every process of the user (no user
	// namespace), so the limit is set this far above their current count.
	NprocAbove bool `json:"nproc_above,omitempty"`
}

// mountOp is one mount the helper makes in its own namespace.
type mountOp struct {
	Op   string `json:"op"` // "tmpfs", "bind" (writable), "robind", "mask"
	Path string `json:"path"`
}

// helperArgs is the helper's command line for spec and argv.
func helperArgs(spec helperSpec, argv []string) ([]string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return append([]string{helperArg, "run", string(raw), "--"}, argv...), nil
}

// helperFail reports why the helper cannot set up the sandbox; the
// command never runs then.
func helperFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "azero sandbox: "+format+"\n", args...)
	return 125
}

// parseHelper reads the helper's command line after helperArg.
func parseHelper(args []string) (verb string, spec helperSpec, argv []string, err error) {
	if len(args) == 0 {
		return "", spec, nil, fmt.Errorf("no verb")
	}
	verb = args[0]
	if verb != "run" {
		return verb, spec, nil, nil
	}
	if len(args) < 4 || args[2] != "--" {
		return "", spec, nil, fmt.Errorf("usage: %s run SPEC -- COMMAND ARGS", helperArg)
	}
	if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
		return "", spec, nil, fmt.Errorf("read the spec: %w", err)
	}
	return verb, spec, args[3:], nil
}
