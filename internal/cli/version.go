package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Go      string `json:"go"`
}

func newVersionCommand(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "version",
		Short:       "Print azero's version",
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK),
		RunE: func(cmd *cobra.Command, args []string) error {
			info := versionInfo{Version: f.Version, Go: runtime.Version()}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						info.Commit = s.Value
					}
				}
				if info.Version == "" || info.Version == "dev" {
					if v := bi.Main.Version; v != "" && v != "(devel)" {
						info.Version = v
					}
				}
			}
			if asJSON {
				return writeJSON(f.IO.Out, info)
			}
			fmt.Fprintf(f.IO.Out, "azero %s (%s)\n", info.Version, info.Go)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
