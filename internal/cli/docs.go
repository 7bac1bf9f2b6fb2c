package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
)

// DocsManOptions are the inputs of `azero docs man`.
type DocsManOptions struct {
	IO      *iostreams.IOStreams
	Abs     func(string) string // resolves a path against the working directory
	Version string

	Dir  string
	Root *cobra.Command // the command tree to document
}

// NewCmdDocs is `azero docs` and its man; runF nil runs docsManRun.
func NewCmdDocs(f *Factory, runF func(*DocsManOptions) error) *cobra.Command {
	opts := &DocsManOptions{IO: f.IO, Abs: f.Env().Abs, Version: f.Version}
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
			opts.Dir, opts.Root = args[0], cmd.Root()
			return run(cmd, runF, docsManRun, opts)
		},
	}
	docs.AddCommand(man)
	return docs
}

func docsManRun(_ context.Context, opts *DocsManOptions) error {
	dir := opts.Abs(opts.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	n, err := writeManPages(opts.Root, opts.Version, dir)
	if err != nil {
		return fmt.Errorf("write man pages into %s: %w", dir, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Wrote %d man pages into %s\n", n, dir)
	return nil
}
