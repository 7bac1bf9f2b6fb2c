package agenthook

import (
	"fmt"
	"strings"
)

// readOnlyTools are Claude Code's tools that change no file and make no
// commit: azero has no opinion on them, whatever matcher the hook is
// registered with.
var readOnlyTools = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`Read Glob Grep LS NotebookRead WebFetch WebSearch TodoRead TodoWrite Task Agent
		TaskCreate TaskGet TaskList TaskUpdate TaskOutput TaskStop BashOutput KillShell KillBash ExitPlanMode
		EnterPlanMode AskUserQuestion SlashCommand Skill ToolSearch LSP ListMcpResourcesTool ReadMcpResourceTool`) {
		readOnlyTools[t] = true
	}
}

// azeroMCPTools are the tools of `azero mcp`: they apply azero's own write
// policy and gate (with the user's typed approval), so the hook has no
// opinion on them under whatever name the MCP server was registered.
var azeroMCPTools = map[string]bool{"azero_apply": true, "azero_write": true, "azero_gate": true, "azero_runs": true}

// noOpinion reports whether azero leaves a tool other than the ones it
// judges to Claude Code's own permissions: Claude Code's read-only tools
// and azero's MCP tools (mcp__SERVER__azero_write and the like).
func noOpinion(tool string) bool {
	if readOnlyTools[tool] {
		return true
	}
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if i := strings.LastIndex(rest, "__"); i > 0 {
			return azeroMCPTools[rest[i+2:]]
		}
	}
	return false
}

// unknownTool denies a tool azero does not know: it may write files or
// commit (another agent's MCP server, a tool newer than azero), and azero
// cannot tell, so it fails closed. The reason says how to keep such tools
// away from the hook.
func unknownTool(tool string) Response {
	return Response{Decision: Deny, Reason: fmt.Sprintf("azero does not know the tool %s, so it cannot tell whether it writes files or commits, and denies it. "+
		"azero's hook judges Write, Edit, MultiEdit, NotebookEdit and Bash: register it with the matcher %q "+
		"(azero hook claude-code --install does) so that other tools never reach it.", tool, Matcher)}
}
