package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/azero-dev/azero/internal/shell"
)

// The module and the main package of azero, for a command that builds it
// again with go run.
const (
	azeroModule  = "github.com/azero-dev/azero"
	azeroMainPkg = azeroModule + "/cmd/azero"
)

// Invocation is how a person starts this azero again from where they stand:
// what the hints azero prints (resume RUN, runs show RUN) begin with.
type Invocation struct {
	// Exe is this executable's path (os.Executable).
	Exe string
	// WorkDir is the directory the person runs commands from.
	WorkDir string
	// LookPath finds a program on the PATH.
	LookPath func(string) (string, error)
	// Version is the main module's version in the build info: "v1.2.0"
	// for go run of a released version, "(devel)" or a "+dirty" pseudo-
	// version for a checkout (which no go run can fetch).
	Version string
}

// Command returns the command that runs this azero from WorkDir:
//   - "azero" when the azero on the PATH is this executable;
//   - "go run ./cmd/azero" (the main package's path relative to WorkDir)
//     when this executable is a build of go run (a temporary go-build file
//     or one of the build cache's, which the next go run may replace)
//     and WorkDir is inside azero's checkout;
//   - "go run github.com/azero-dev/azero/cmd/azero@VERSION" for a go run
//     of a released version outside a checkout;
//   - else this executable's absolute path, quoted for a POSIX shell when
//     it must be.
func (inv Invocation) Command() string {
	exe := inv.Exe
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	real := exe
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		real = r
	}
	if inv.LookPath != nil {
		if onPath, err := inv.LookPath("azero"); err == nil {
			if r, err := filepath.EvalSymlinks(onPath); err == nil && r == real {
				return "azero"
			}
		}
	}
	if goRunBuild(real) {
		if root := azeroCheckout(inv.WorkDir); root != "" {
			rel, err := filepath.Rel(inv.WorkDir, filepath.Join(root, "cmd", "azero"))
			if err == nil {
				rel = filepath.ToSlash(rel)
				if !strings.HasPrefix(rel, "../") {
					rel = "./" + rel
				}
				return "go run " + shell.Quote(rel)
			}
		}
		if strings.HasPrefix(inv.Version, "v") && !strings.Contains(inv.Version, "+") {
			return "go run " + azeroMainPkg + "@" + inv.Version
		}
	}
	return shell.Quote(exe)
}

var buildCacheDir = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

// goRunBuild reports whether exe is an executable go run built: the first
// go run of a program links it into a temporary $WORK/b001/exe/NAME
// (WORK a go-build directory, removed when go run ends), later ones run
// the copy in the build cache, $GOCACHE/xx/HASH-d/NAME.
func goRunBuild(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" {
		for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
			if strings.HasPrefix(filepath.Base(d), "go-build") {
				return true
			}
		}
		return false
	}
	return buildCacheDir.MatchString(filepath.Base(dir)) && len(filepath.Base(filepath.Dir(dir))) == 2
}

// azeroCheckout returns the root of azero's own checkout holding dir (a
// go.mod declaring azero's module, with cmd/azero in it), or "".
func azeroCheckout(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if modulePath(filepath.Join(d, "go.mod")) == azeroModule {
			if info, err := os.Stat(filepath.Join(d, "cmd", "azero")); err == nil && info.IsDir() {
				return d
			}
			return ""
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// modulePath reads the module directive of a go.mod ("" when there is
// none, or no such file).
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// thisCommand is the command that runs this azero from workDir
// (Invocation.Command), for the hints azero prints; executable nil:
// os.Executable.
func thisCommand(executable func() (string, error), workDir string, lookPath func(string) (string, error)) string {
	if executable == nil {
		executable = os.Executable
	}
	exe, _ := executable()
	if exe == "" {
		return "azero"
	}
	inv := Invocation{Exe: exe, WorkDir: workDir, LookPath: lookPath}
	if info, ok := debug.ReadBuildInfo(); ok && info.Path == azeroMainPkg {
		inv.Version = info.Main.Version
	}
	return inv.Command()
}
