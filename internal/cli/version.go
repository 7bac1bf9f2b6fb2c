package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
)

type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Go      string `json:"go"`
}

// resolveVersion says which azero this is. The version stamped at build time
// (scripts/release.sh sets main.version to 'git describe') wins; without one
// ("" or "dev") it is the module version the Go toolchain recorded (a 'go
// install ...@v1.2.3' build), else "dev". The commit is the VCS revision the
// toolchain recorded, when it did.
func resolveVersion(stamped string, bi *debug.BuildInfo) versionInfo {
	info := versionInfo{Version: stamped, Go: runtime.Version()}
	if info.Version == "" {
		info.Version = "dev"
	}
	if bi == nil {
		return info
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			info.Commit = s.Value
		}
	}
	if info.Version == "dev" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
	}
	return info
}

// buildVersion resolves the running binary's version.
func buildVersion(stamped string) versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveVersion(stamped, bi)
}

// VersionOptions are the inputs of `azero version`.
type VersionOptions struct {
	IO      *iostreams.IOStreams
	Version string // stamped into the build ("" for none)

	JSON bool
}

// NewCmdVersion is `azero version`; runF nil runs versionRun.
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Version: f.Version}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print azero's version",
		Long: trimLines(`
  Print azero's version: the one stamped into a release build, or the module
  version 'go install' recorded, or "dev" for a build from a checkout; with
  --json also the commit, when the build recorded it, and the Go version.`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, versionRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func versionRun(_ context.Context, opts *VersionOptions) error {
	info := buildVersion(opts.Version)
	if opts.JSON {
		return writeJSON(opts.IO.Out, info)
	}
	fmt.Fprintf(opts.IO.Out, "azero %s (%s)\n", info.Version, info.Go)
	return nil
}
