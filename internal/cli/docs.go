package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newDocsCommand(f *Factory) *cobra.Command {
	docs := &cobra.Command{
		Use:   "docs",
		Short: "Generate documentation from the commands",
		Args:  noArgs,
		// It only says what to name: azero docs man DIR.
		Annotations: exitCodesAnnotation(ExitOK, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("name what to generate: azero docs man DIR")
		},
	}
	man := &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR",
		Long: trimLines(`
  Write azero's man pages, one per command (azero.1, azero-implement.1,
  azero-runs-show.1, ...), into DIR, created if needed. Install them with,
  for example:

    azero docs man ~/.local/share/man/man1`),
		Args:        exactArgs(1, "the directory to write the pages into"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := f.abs(args[0])
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", dir, err)
			}
			n, err := writeManPages(cmd.Root(), f.Version, dir)
			if err != nil {
				return fmt.Errorf("write man pages into %s: %w", dir, err)
			}
			fmt.Fprintf(f.IO.ErrOut, "Wrote %d man pages into %s\n", n, dir)
			return nil
		},
	}
	docs.AddCommand(man)
	return docs
}
