// Package agenthook is azero's referee inside Claude Code: the decisions
// of `azero hook claude-code`, a PreToolUse command hook.
//
// Claude Code runs the hook before each tool call with a JSON payload on
// stdin (session_id, cwd, hook_event_name, tool_name, tool_input, ...).
// The hook prints {"hookSpecificOutput": {"hookEventName": "PreToolUse",
// "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason":
// ...}} and exits 0, or prints nothing to have no opinion (Claude Code's
// own permission flow then decides).
//
// The rules, with the project root the git work tree holding cwd:
//   - Write, Edit, MultiEdit, NotebookEdit: with cwd in no git work tree
//     (or inside .git) there is no root, and the call is denied. A path
//     outside the root, through a symlink out of it, or inside .git is
//     denied (safewrite's confinement). A Write replacing an existing file
//     of more than 100 lines asks, with the line counts and the lines it
//     would delete (the first 20). An Edit or MultiEdit that deletes more
//     than half of such a file asks (agentpolicy.Guts), with the lines too.
//     A NotebookEdit is judged on the notebook's cell source the same way:
//     deleting a cell deletes its lines, replacing a cell's source deletes
//     the lines the new source does not keep, and deleting more than half
//     of the cell source of a notebook over 100 lines of it asks. An edit
//     azero cannot reproduce (old_string not in the file, or not unique
//     without replace_all; a notebook that does not exist or is not valid
//     notebook JSON, a cell_id it does not have) is denied with what to
//     do: azero cannot review what it cannot compute. A change to a Claude
//     Code settings file (.claude/settings*.json) asks: it holds the hooks.
//     Anything else is allowed.
//   - Bash: every `git commit` the command would run (found by parsing the
//     shell command with internal/shellcmd: && and ; chains, subshells,
//     $(...), sh -c, eval, env and sudo wrappers, cd and git -C, aliases)
//     is analysed with the diff gate: the index, plus the working tree
//     with -a, paths, or commands before it that may stage. Flagged files, --no-verify (or hooks turned
//     off with -c core.hooksPath) and commits azero cannot fully read ask,
//     with the gate's summary. Otherwise azero has no opinion: a Bash
//     command is never allowed by azero, since it may do more than commit.
//   - Claude Code's read-only tools (Read, Grep, WebFetch, ...) and azero's
//     own MCP tools (which apply this policy themselves): no opinion.
//   - Any other tool is denied: azero cannot tell whether it writes or
//     commits (another MCP server's tool, a tool newer than azero). The
//     installed matcher keeps such tools away from the hook.
//
// Invariants:
//   - Fail closed: any error (a payload that is not JSON, a git failure, a
//     path that cannot be read) is a deny naming the error, printed as
//     JSON with exit status 0, never a crash or exit 1 (which Claude Code
//     treats as a non-blocking error that lets the tool run).
//   - The hook never writes a project file and never runs the command it
//     judges; it runs git only to read.
//   - Every decision is an audit event "agent_hook_decision".
package agenthook
