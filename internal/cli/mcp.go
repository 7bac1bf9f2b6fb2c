package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/mcpserver"
	"github.com/azero-dev/azero/internal/runs"
)

// MCPOptions are the inputs of `azero mcp`.
type MCPOptions struct {
	IO      *iostreams.IOStreams
	Env     *runs.Env
	WorkDir string
	Version string
	Now     func() time.Time

	Root string
}

// NewCmdMCP is `azero mcp`; runF nil runs mcpRun.
func NewCmdMCP(f *Factory, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{IO: f.IO, Env: f.Env(), WorkDir: f.WorkDir, Version: f.Version, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve azero's capabilities to any agent over the Model Context Protocol (stdio)",
		Long: trimLines(`
  An MCP server on stdin/stdout for agents that speak the Model Context Protocol
  (Claude Code, Codex, Cursor, ...). It serves one project root: the git work
  tree of the working directory, or --root. Every path a tool takes must stay
  inside it (symlinks resolved, never inside .git).

  Tools:
    azero_apply  file, edits, dry_run: FIND/REPLACE edit blocks, all or nothing
    azero_write  path, content, strategy (replace, append, insert + line, extend)
    azero_gate   repository, staged: the diff gate's analysis; it approves nothing
    azero_runs   status, workflow, limit: azero's workflow runs

  Replacing an existing file of more than 100 lines, or an edit deleting more
  than half of one, is written only after the user types 'approve' in the
  client's elicitation form. A client without elicitation gets a refusal that
  says what to do instead; nothing is written without the user. Tool failures,
  arguments of the wrong name or type among them, are tool results marked
  isError, with a message the model can act on. Every write, refusal and
  answer is in the audit log ($AZERO_STATE_DIR/audit.jsonl).

  Protocol: JSON-RPC 2.0, one message per line. A message may be at most
  16 MiB (the line ending excluded); a longer one is answered with error
  -32600 (under its id, when the line names one) and skipped without being
  held in memory. A line that is not JSON gets -32700, one that is not a
  JSON-RPC message -32600, params or tool arguments that are not an object
  -32602, and a request before initialize -32600. JSON-RPC batches are taken
  in MCP versions before 2025-06-18 only. A bad message never ends the session.

  Nothing but the protocol goes to stdout; the server runs until its client
  closes stdin.`),
		Example: trimLines(`
    claude mcp add azero -- azero mcp
    azero mcp --root ~/src/service`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, mcpRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Root, "root", "", "the project root to serve (default: the git work tree of the working directory)")
	return cmd
}

func mcpRun(ctx context.Context, opts *MCPOptions) error {
	root, err := mcpRoot(ctx, opts)
	if err != nil {
		return err
	}
	logger, err := opts.Env.Audit()
	if err != nil {
		return fmt.Errorf("open the audit log: %w", err)
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Root:    root,
		Version: opts.Version,
		Audit:   logger,
		// azero_runs lists this machine's runs, as azero runs does.
		Runs: func(ctx context.Context) (mcpserver.Lister, error) {
			return runs.OpenLocal(ctx, opts.Env, runs.Catalog())
		},
		Now: opts.Now,
	})
	if err != nil {
		return err
	}
	err = srv.Run(ctx, &mcpserver.Transport{In: opts.IO.In, Out: opts.IO.Out})
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// mcpRoot is --root, else the git work tree of the working directory.
func mcpRoot(ctx context.Context, opts *MCPOptions) (string, error) {
	if root := opts.Root; root != "" {
		root = opts.Env.Abs(root)
		fi, err := os.Stat(root)
		if err != nil {
			return "", fmt.Errorf("--root: %w", err)
		}
		if !fi.IsDir() {
			return "", usagef("--root %s is not a directory", root)
		}
		return filepath.Clean(root), nil
	}
	top, err := gitx.TopLevel(ctx, opts.WorkDir)
	if err != nil {
		return "", fmt.Errorf("azero mcp serves one repository: %w; or pass --root DIR", err)
	}
	return top, nil
}
