package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/runs"
)

// SelftestOptions are the inputs of `azero selftest`.
type SelftestOptions struct {
	RunDeps

	Dir   string
	Steps int
	Delay time.Duration
	JSON  bool
}

// NewCmdSelftest is `azero selftest`; runF nil runs selftestRun.
func NewCmdSelftest(f *Factory, runF func(*SelftestOptions) error) *cobra.Command {
	opts := &SelftestOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Exercise the workflow engine on this machine: checkpoints, a gate, resume",
		Long: trimLines(`
  Run a small workflow that shows the engine works here: a few work steps, each
  checkpointed to the store, then a gate that asks you to type 'approve'. Every
  step appends a line to effects.log in --dir, so you can kill the process at any
  moment (even with SIGKILL), run 'azero resume RUN', and check that every step
  happened exactly once (a step killed mid-way runs again).

  Without a terminal the run stops at the gate, is saved as waiting, and azero
  exits with code 3.`),
		Example:     "  azero selftest --steps 5 --delay 1s\n  azero resume 261122-k3x9qa",
		Args:        noArgs,
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Steps < 1 {
				return usagef("--steps must be at least 1")
			}
			if opts.Delay < 0 {
				return usagef("--delay must not be negative (got %s)", opts.Delay)
			}
			return run(cmd, runF, selftestRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "directory for effects.log (default: a new temporary directory)")
	cmd.Flags().IntVar(&opts.Steps, "steps", 3, "number of work steps")
	cmd.Flags().DurationVar(&opts.Delay, "delay", 200*time.Millisecond, "how long each work step takes")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	return cmd
}

func selftestRun(ctx context.Context, opts *SelftestOptions) error {
	dir := opts.Env.Abs(opts.Dir)
	if dir == "" {
		d, err := os.MkdirTemp("", "azero-selftest-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	eng, err := runs.OpenLocal(ctx, opts.Env, runs.Catalog())
	if err != nil {
		return err
	}
	defer eng.Close()
	out, err := eng.Start(ctx, runs.PrepareSelftest(dir, opts.Steps, opts.Delay, opts.Terminal()))
	return opts.report(out, err, opts.JSON)
}
