package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/runs"
)

// ModelsOptions are the inputs of `azero models`.
type ModelsOptions struct {
	IO      *iostreams.IOStreams
	Env     *runs.Env
	WorkDir string

	JSON bool
}

// config is the configuration of the repository azero stands in.
func (o *ModelsOptions) config(ctx context.Context) (config.Config, error) {
	return o.Env.Config(repoRoot(ctx, o.WorkDir))
}

// NewCmdModels is `azero models` and its ping; runF nil runs modelsRun.
func NewCmdModels(f *Factory, runF func(*ModelsOptions) error) *cobra.Command {
	opts := &ModelsOptions{IO: f.IO, Env: f.Env(), WorkDir: f.WorkDir}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the model used for each role, whether its key is present, and its price",
		Long: trimLines(`
  List the model configured for each role (drafter, reviewer, coder), where its
  key and base URL come from (environment or config; keys are never shown),
  and its price in USD per million tokens. Nothing is sent anywhere; use
  'azero models ping ROLE' for one tiny real call.

  Models are named provider:model: anthropic:claude-sonnet-4-5,
  gemini:gemini-2.5-pro, openai:gpt-4.1, openai:qwen2.5-coder (any
  OpenAI-compatible server via OPENAI_BASE_URL), mock:scripted (offline).
  AZERO_MOCK_LLM=1 makes every role use mock:scripted.`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, modelsRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.AddCommand(NewCmdModelsPing(f, nil))
	return cmd
}

type modelView struct {
	Role       llm.Role `json:"role"`
	Model      string   `json:"model"`
	Mocked     bool     `json:"mocked"`
	KeyPresent bool     `json:"key_present"`
	Endpoint   string   `json:"endpoint"`
	Priced     bool     `json:"priced"`
	InputUSD   float64  `json:"input_usd_per_mtok"`
	OutputUSD  float64  `json:"output_usd_per_mtok"`
	Problem    string   `json:"problem,omitempty"`
}

func modelsRun(ctx context.Context, opts *ModelsOptions) error {
	cfg, err := opts.config(ctx)
	if err != nil {
		return err
	}
	env := opts.Env.ProviderEnv(cfg)
	var views []modelView
	for _, role := range runs.Roles {
		env.Role = role
		st := provider.Describe(runs.RoleModel(cfg, role, ""), env)
		v := modelView{Role: role, Model: st.Spec.String(), Mocked: st.Mocked, KeyPresent: st.Endpoint.KeyPresent(),
			Endpoint: st.Endpoint.String(), Priced: st.Priced, InputUSD: st.Price.Input, OutputUSD: st.Price.Output}
		if st.Err != nil {
			v.Problem = st.Err.Error()
		}
		views = append(views, v)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{"models": views})
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tMODEL\tKEY\tPRICE IN/OUT (USD/Mtok)\tENDPOINT")
	for _, v := range views {
		key := "missing"
		switch {
		case v.Mocked || v.KeyPresent:
			key = "ok"
		case v.Problem == "":
			key = "not needed"
		}
		price := "unpriced"
		if v.Priced {
			price = fmt.Sprintf("%.2f / %.2f", v.InputUSD, v.OutputUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Role, v.Model, key, price, v.Endpoint)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range views {
		if v.Problem != "" {
			fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", v.Role, v.Problem)
		}
	}
	return nil
}

// ModelsPingOptions are the inputs of `azero models ping`.
type ModelsPingOptions struct {
	ModelsOptions
	Role llm.Role
}

// NewCmdModelsPing is `azero models ping`; runF nil runs modelsPingRun.
func NewCmdModelsPing(f *Factory, runF func(*ModelsPingOptions) error) *cobra.Command {
	opts := &ModelsPingOptions{ModelsOptions: ModelsOptions{IO: f.IO, Env: f.Env(), WorkDir: f.WorkDir}}
	cmd := &cobra.Command{
		Use:         "ping ROLE",
		Short:       "Make one tiny real call to a role's model",
		Long:        "Send a one-line prompt to the model of ROLE (drafter, reviewer or coder) and report\nthe reply, stop reason, tokens, cost and latency. This costs a few tokens.",
		Args:        exactArgs(1, "a role: drafter, reviewer or coder"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Role = llm.Role(args[0])
			switch opts.Role {
			case llm.RoleDrafter, llm.RoleReviewer, llm.RoleCoder:
			default:
				return usagef("unknown role %q: use drafter, reviewer or coder", opts.Role)
			}
			return run(cmd, runF, modelsPingRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

type pingView struct {
	Role         llm.Role       `json:"role"`
	Model        string         `json:"model"`
	Text         string         `json:"text"`
	Stop         llm.StopReason `json:"stop"`
	InputTokens  int            `json:"input_tokens"`
	OutputTokens int            `json:"output_tokens"`
	CostUSD      float64        `json:"cost_usd"`
	LatencyMS    int64          `json:"latency_ms"`
}

func modelsPingRun(ctx context.Context, opts *ModelsPingOptions) error {
	role := opts.Role
	cfg, err := opts.config(ctx)
	if err != nil {
		return err
	}
	env := opts.Env.ProviderEnv(cfg)
	env.Role = role
	spec := runs.RoleModel(cfg, role, "")
	m, err := provider.Open(spec, env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	resp, err := m.Generate(ctx, llm.Request{
		System:    "You are a connectivity check.",
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: "Reply with the single word: pong"}},
		MaxTokens: 16,
		Purpose:   "ping",
	})
	if err != nil {
		var mk *llm.MissingKeyError
		if errors.As(err, &mk) {
			return err
		}
		return fmt.Errorf("ping %s (%s): %w", role, m.Name(), err)
	}
	v := pingView{Role: role, Model: m.Name(), Text: resp.Text, Stop: resp.Stop, InputTokens: resp.InputTokens,
		OutputTokens: resp.OutputTokens, CostUSD: resp.CostUSD, LatencyMS: resp.Latency.Milliseconds()}
	if opts.JSON {
		return writeJSON(opts.IO.Out, v)
	}
	fmt.Fprintf(opts.IO.Out, "%s (%s): %q\nstop %s, %d tokens in, %d out, $%.6f, %d ms\n",
		v.Role, v.Model, v.Text, v.Stop, v.InputTokens, v.OutputTokens, v.CostUSD, v.LatencyMS)
	return nil
}
