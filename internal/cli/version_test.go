package cli

import (
	"encoding/json"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
)

func TestResolveVersion(t *testing.T) {
	t.Parallel()
	withVCS := func(main string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/azero-dev/azero", Version: main},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "38a7d53aa0"}}}
	}
	tests := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    versionInfo
	}{
		{name: "release build: the stamp wins over the module version", stamped: "v0.3.0-4-g38a7d53", bi: withVCS("v0.2.0"),
			want: versionInfo{Version: "v0.3.0-4-g38a7d53", Commit: "38a7d53aa0"}},
		{name: "go install of a tag: the module version", stamped: "dev",
			bi:   &debug.BuildInfo{Main: debug.Module{Path: "github.com/azero-dev/azero", Version: "v0.2.0"}},
			want: versionInfo{Version: "v0.2.0"}},
		{name: "go build in a checkout with VCS stamping", stamped: "dev", bi: withVCS("v0.0.0-20251123004200-38a7d53aa0+dirty"),
			want: versionInfo{Version: "v0.0.0-20251123004200-38a7d53aa0+dirty", Commit: "38a7d53aa0"}},
		{name: "go build without VCS stamping", stamped: "dev", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: versionInfo{Version: "dev"}},
		{name: "empty stamp and no build info", stamped: "", bi: nil, want: versionInfo{Version: "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.want.Go = runtime.Version()
			if got := resolveVersion(tt.stamped, tt.bi); got != tt.want {
				t.Errorf("resolveVersion(%q) = %+v, want %+v", tt.stamped, got, tt.want)
			}
		})
	}
}

// The stamped version reaches both `azero version` and `azero --version`.
func TestVersionCommandPrintsTheStamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want func(out string) bool
	}{
		{name: "version", args: []string{"version"}, want: func(out string) bool {
			return out == "azero v9.8.7-test ("+runtime.Version()+")\n"
		}},
		{name: "version --json", args: []string{"version", "--json"}, want: func(out string) bool {
			var v versionInfo
			return json.Unmarshal([]byte(out), &v) == nil && v.Version == "v9.8.7-test" && v.Go == runtime.Version()
		}},
		{name: "--version", args: []string{"--version"}, want: func(out string) bool {
			return strings.Contains(out, "v9.8.7-test")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, _, out, errOut := iostreams.Test()
			f := &Factory{IO: io, Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
				LookPath: exec.LookPath, WorkDir: t.TempDir(), Now: time.Now, Version: "v9.8.7-test"}
			if code := Run(t.Context(), f, tt.args); code != ExitOK {
				t.Fatalf("azero %v exited %d: %s", tt.args, code, errOut)
			}
			if !tt.want(out.String()) {
				t.Errorf("azero %v printed %q", tt.args, out)
			}
		})
	}
}
