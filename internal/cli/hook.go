package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/agenthook"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/shell"
)

// HookOptions are the inputs of `azero hook claude-code`.
type HookOptions struct {
	IO         *iostreams.IOStreams
	Audit      func() (*audit.Logger, error)
	Writer     func() (*safewrite.Writer, error) // for --install
	WorkDir    string
	Getenv     func(string) string
	Executable func() (string, error)
	LookPath   func(string) (string, error)

	Install bool
	User    bool
}

func NewCmdHook(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Put azero's referee inside other coding agents (Claude Code)",
		Long: trimLines(`
  Hooks that let other coding agents work in your repository under azero's
  rules. See 'azero hook claude-code --help'; for any agent that speaks the
  Model Context Protocol, see 'azero mcp --help'.`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitUsage),
		RunE:        func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdHookClaudeCode(f, nil))
	return cmd
}

func NewCmdHookClaudeCode(f *Factory, runF func(*HookOptions) error) *cobra.Command {
	opts := &HookOptions{IO: f.IO, Audit: f.Env().Audit, WorkDir: f.WorkDir, Getenv: f.Getenv, Executable: os.Executable, LookPath: f.LookPath,
		Writer: func() (*safewrite.Writer, error) { return f.writer(false, false) }}
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Claude Code PreToolUse hook: azero's write policy and diff gate on Claude's tool calls",
		Long: trimLines(`
  A Claude Code PreToolUse command hook. Claude Code runs it before each tool
  call with the call as JSON on stdin; azero answers on stdout with a permission
  decision (allow, ask or deny, and the reason) and exits 0, or prints nothing
  when it has no opinion. The project root is the git work tree holding the
  session's cwd.

  Write, Edit, MultiEdit, NotebookEdit:
    deny   a path outside the project root, through a symlink leading out of
           it, or inside .git; any path when the cwd is in no git work tree
           (there is no project root); an edit azero cannot reproduce
           (old_string not in the file, or not unique without replace_all; a
           notebook that does not exist or is not valid notebook JSON, a
           cell_id it does not have)
    ask    a Write replacing an existing file of more than 100 lines; an Edit
           or MultiEdit deleting more than half of such a file; a NotebookEdit
           deleting more than half of the cell source of a notebook over 100
           lines of it (deleting a cell deletes its lines, replacing a cell's
           source the lines the new source does not keep); the reason gives
           the line counts and the first 20 lines it deletes. Any change to a
           .claude/settings*.json file (it holds the hooks)
    allow  anything else (new files, small files, targeted edits, small
           notebook edits)
  Bash:
    Every 'git commit' the command would run (in && chains, subshells, $(...),
    sh -c, with git -C, cd, -a, --amend, aliases) is analysed by the diff gate:
    the index, plus the working tree when the commit may take it. Flagged files,
    --no-verify (or hooks turned off) and commands azero cannot fully read ask,
    with the gate's summary. Otherwise azero has no opinion: it never allows a
    Bash command, which may do more than commit.
  Other tools:
    no opinion on Claude Code's read-only tools (Read, Grep, WebFetch, ...)
    and on azero's own MCP tools; any other tool is denied, since azero cannot
    tell whether it writes (the installed matcher keeps them from the hook).
  Any error (a payload that is not JSON, git failing, an unreadable file)
  answers deny with the error: the hook fails closed. Every decision is in
  the audit log ($AZERO_STATE_DIR/audit.jsonl).

  --install adds the hook to the repository's .claude/settings.json (with
  --user: ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json),
  keeping every other setting and hook; installing again changes nothing. The
  hook is installed with "onFailure": "block", so that Claude Code blocks the
  tool call when the hook cannot run at all.`),
		Example: trimLines(`
    azero hook claude-code --install
    azero hook claude-code --install --user
    echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"'$PWD'","tool_input":{"command":"git commit -am wip"}}' | azero hook claude-code`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.User && !opts.Install {
				return usagef("--user only applies to --install")
			}
			return run(cmd, runF, hookRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Install, "install", false, "add the hook to .claude/settings.json of the repository")
	cmd.Flags().BoolVar(&opts.User, "user", false, "with --install: add it to your user settings (~/.claude/settings.json) instead")
	return cmd
}

// hookRun installs the hook (--install) or answers one PreToolUse call.
func hookRun(ctx context.Context, opts *HookOptions) error {
	if opts.Install {
		return hookInstall(ctx, opts)
	}
	return hookAnswer(ctx, opts)
}

// hookAnswer answers one PreToolUse call. It returns an error only for a
// payload of another hook event (exit 2, which Claude Code treats as a
// block) or when stdout cannot be written.
func hookAnswer(ctx context.Context, opts *HookOptions) (err error) {
	defer func() {
		// A crash anywhere (opening the log, reading stdin) is a denial
		// printed as JSON, like every other error: a Go panic would exit 2
		// with a stack trace as Claude's reason.
		if r := recover(); r != nil {
			resp := agenthook.Response{Decision: agenthook.Deny, Reason: fmt.Sprintf("azero could not check this tool call, so it is denied: internal error: %v", r)}
			err = resp.Write(opts.IO.Out)
		}
	}()
	logger, err := opts.Audit()
	if err != nil {
		// Every decision is audited; without the log there is no decision
		// but a denial.
		resp := agenthook.Response{Decision: agenthook.Deny, Reason: "azero could not open its audit log, so it denies every tool call until that is fixed: " + err.Error()}
		return resp.Write(opts.IO.Out)
	}
	h := &agenthook.Hook{Audit: logger, WorkDir: opts.WorkDir, Home: opts.Getenv("HOME")}
	err = h.Run(ctx, opts.IO.In, opts.IO.Out)
	var ev *agenthook.EventError
	if errors.As(err, &ev) {
		return &UsageError{Err: err}
	}
	return err
}

// hookInstall adds the hook to a Claude Code settings file through
// safewrite.
func hookInstall(ctx context.Context, opts *HookOptions) error {
	root, rel, err := opts.settingsFile(ctx)
	if err != nil {
		return err
	}
	settings := filepath.Join(root, rel)
	azero, err := opts.azeroCommand()
	if err != nil {
		return err
	}
	existing, snap, err := safewrite.Read(root, rel)
	if err != nil {
		return fmt.Errorf("read %s: %w", settings, err)
	}
	merged, changed, err := agenthook.MergeSettings(existing, agenthook.HookCommand(azero))
	if err != nil {
		return fmt.Errorf("%s: %w", settings, err)
	}
	if !changed {
		fmt.Fprintf(opts.IO.ErrOut, "%s already runs azero's Claude Code hook; nothing changed.\n", settings)
		return nil
	}
	req := safewrite.Request{Root: root, Path: rel, Content: merged, Base: &snap, Actor: "azero hook claude-code --install"}
	prop, err := safewrite.ProposeContext(ctx, req)
	if err != nil {
		return fmt.Errorf("write %s: %w", settings, err)
	}
	if prop.Exists && agenthook.KeepsOtherSettings(existing, merged) {
		// The merge keeps every setting of exactly the content read and
		// changes only azero's hook: nothing can be lost, so a settings
		// file of any size takes it as an edit of that content (stale if
		// the file changes meanwhile), without a question. Anything else
		// stays a replace, approved in a terminal.
		req.Strategy = safewrite.Edit
	}
	w, err := opts.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(ctx, req); err != nil {
		var ae *safewrite.ApprovalError
		if errors.As(err, &ae) && ae.NeedsHuman() {
			return fmt.Errorf("write %s: %w (azero cannot show that the merge keeps every other setting; run azero hook claude-code --install in a terminal to see the diff and approve it)", settings, err)
		}
		return fmt.Errorf("write %s: %w", settings, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Installed azero's PreToolUse hook in %s (tools %s).\n"+
		"Claude Code now asks before a Write replaces a file of more than 100 lines or an edit guts one, and before a git commit the diff gate flags;\n"+
		"it denies writes outside the repository. Open /hooks in Claude Code (or restart it) to load the hook.\n", settings, agenthook.Matcher)
	return nil
}

// settingsFile returns the root safewrite confines the write to and the
// settings file below it.
func (o *HookOptions) settingsFile(ctx context.Context) (root, rel string, err error) {
	if !o.User {
		top, err := gitx.TopLevel(ctx, o.WorkDir)
		if err != nil {
			return "", "", fmt.Errorf("%w (or pass --user to install the hook for all your projects)", err)
		}
		return top, filepath.Join(".claude", "settings.json"), nil
	}
	dir := o.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := o.Getenv("HOME")
		if home == "" {
			return "", "", errors.New("cannot locate your Claude Code settings: set HOME (or CLAUDE_CONFIG_DIR)")
		}
		dir = filepath.Join(home, ".claude")
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	return filepath.Dir(dir), filepath.Join(filepath.Base(dir), "settings.json"), nil
}

// azeroCommand is how the hook starts azero: "azero" when the azero on
// PATH is this executable, else this executable's absolute path, quoted.
func (o *HookOptions) azeroCommand() (string, error) {
	exe, err := o.Executable()
	if err != nil {
		return "", fmt.Errorf("locate the azero executable for the hook: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if onPath, err := o.LookPath("azero"); err == nil {
		if real, err := filepath.EvalSymlinks(onPath); err == nil && real == exe {
			return "azero", nil
		}
	}
	return shell.QuotePOSIX(exe), nil
}
