// Package mcpserver is `azero mcp`: azero's capabilities as Model Context
// Protocol tools (the official Go SDK), for any MCP client (Claude Code,
// Codex, Cursor, ...).
//
// Tools:
//   - azero_apply: FIND/REPLACE edit blocks applied to one file, all or
//     nothing (internal/edit), written through safewrite; dry_run shows
//     the diff.
//   - azero_write: a safe write with a merge strategy (internal/safewrite).
//   - azero_gate: the diff gate's analysis of what a commit would take. It
//     approves nothing.
//   - azero_runs: azero's workflow runs.
//
// Invariants:
//   - The server serves one project root, fixed at start; every path a
//     tool takes is confined to it (safewrite's rules: symlinks resolved,
//     never inside .git).
//   - A write that needs approval (safewrite's 100-line rule, or an edit
//     that deletes more than half of a large file, agentpolicy.Guts) is
//     written only after the user typed "approve" in an MCP elicitation
//     (a form with one text field). The approval is bound to exactly that
//     write: a client of the current protocol answers by retrying the call,
//     and the retry must carry the request state of the question, an HMAC
//     (under a key that never leaves the process) of the path, the
//     strategy, the file's content and the result, recomputed and compared
//     when the answer comes back; an older client answers while the call
//     waits. Either way the write is then made against the content the
//     user saw (safewrite's Base), so a file changed meanwhile is not
//     written. A client without elicitation gets the refusal and what to
//     do instead; nothing is ever written because nobody could be asked.
//   - Tool failures are tool results with isError and a message the model
//     can act on, never protocol errors; so are arguments of the wrong name
//     or type, named as the tool's schema names them (checkArguments).
//   - Over Transport (`azero mcp`'s stdio), no message ends the session:
//     a line that is not JSON, not JSON-RPC, over MaxMessageBytes, or
//     otherwise one the SDK would refuse gets its JSON-RPC 2.0 error from
//     azero (check), and so do arguments that are not an object (-32602)
//     and a request before initialize (-32600). Only the end of stdin ends
//     the session. No error text shows Go's types or reflection (answer).
//   - Every write and refusal is in the audit log (safewrite's events),
//     and so is the outcome of every approval question (EventApproval:
//     approved, declined, cancelled, wrong_word, unavailable, stale).
package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/audit"
)

// Options configure the server.
type Options struct {
	// Root is the project root every path is confined to.
	Root string
	// Version is azero's version, reported to clients.
	Version string
	// Audit records writes and approvals; nil discards.
	Audit *audit.Logger
	// Runs opens the run service azero_runs lists through, on first use;
	// nil reports no runs.
	Runs func(ctx context.Context) (Lister, error)
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Key signs approval requests; default 32 random bytes.
	Key []byte
}

// server holds what the tools share.
type server struct {
	root    string // resolved, symlink-free
	audit   *audit.Logger
	lister  func(ctx context.Context) (Lister, error)
	now     func() time.Time
	key     []byte
	schemas map[string]*jsonschema.Schema // the tools' input schemas, by tool name
}

const instructions = `azero is a referee for changes to this repository. Use azero_apply to change part of a file ` +
	`(FIND/REPLACE blocks, all or nothing), azero_write to create a file or add to one, azero_gate before ` +
	`committing to see what a commit would take and which files a human must review, azero_runs to list azero's ` +
	`workflow runs. Paths are relative to the project root. Replacing a file of more than 100 lines, or an edit ` +
	`deleting most of one, needs the user's typed approval: prefer small edits.`

// New returns the MCP server for the project at opts.Root.
func New(opts Options) (*mcp.Server, error) {
	if opts.Root == "" {
		return nil, errors.New("no project root given")
	}
	abs, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	s := &server{root: root, audit: opts.Audit, lister: opts.Runs, now: opts.Now, key: opts.Key, schemas: map[string]*jsonschema.Schema{}}
	if s.now == nil {
		s.now = time.Now
	}
	if len(s.key) == 0 {
		s.key = make([]byte, 32)
		if _, err := rand.Read(s.key); err != nil {
			return nil, fmt.Errorf("make the approval key: %w", err)
		}
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "azero", Title: "azero", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	if err := s.addTools(srv); err != nil {
		return nil, err
	}
	srv.AddReceivingMiddleware(s.checkArguments)
	return srv, nil
}

func (s *server) addTools(srv *mcp.Server) error {
	no := false
	return errors.Join(addTool(s, srv, &mcp.Tool{
		Name:  "azero_apply",
		Title: "Apply FIND/REPLACE edits to a file",
		Description: "Change part of an existing file with edit blocks, all or nothing. Write each change as\n" +
			"### CHANGE 1: what changes\nFIND:\n```\nexact lines from the file\n```\nREPLACE WITH:\n```\nthe new lines\n```\n" +
			"(or <<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks). Each FIND must match whole lines exactly once " +
			"(whitespace differences are tolerated); never abbreviate kept code with placeholders like \"...\". " +
			"If any block fails nothing is written and the error shows the closest lines. dry_run returns the diff only. " +
			"An edit deleting more than half of a file over 100 lines asks the user to approve.",
		Annotations: &mcp.ToolAnnotations{Title: "Apply edits", DestructiveHint: &no, OpenWorldHint: &no},
	}, s.apply), addTool(s, srv, &mcp.Tool{
		Name:  "azero_write",
		Title: "Write a file safely",
		Description: "Write a file inside the project root. strategy: replace (default; creates new files), append " +
			"(content goes at the end), insert (content starts at line), extend (new Go or Python members join " +
			"existing types; needs the whole new members). append, insert and extend keep every existing line. " +
			"Replacing an existing file of more than 100 lines needs the user's typed approval; to change part of " +
			"a large file use azero_apply instead.",
		Annotations: &mcp.ToolAnnotations{Title: "Write a file", OpenWorldHint: &no},
	}, s.write), addTool(s, srv, &mcp.Tool{
		Name:  "azero_gate",
		Title: "Analyse what a commit would take",
		Description: "The diff gate's analysis of what a commit in the repository would take: every changed file with " +
			"its line counts and change type, and the files a human must review (REPLACED, DELETED, or more than " +
			"half changed) with their diffs. It approves nothing: a human reviews flagged files with `azero gate` " +
			"in a terminal. staged limits it to the index (what a plain git commit takes).",
		Annotations: &mcp.ToolAnnotations{Title: "Diff gate analysis", ReadOnlyHint: true, OpenWorldHint: &no},
	}, s.gate), addTool(s, srv, &mcp.Tool{
		Name:        "azero_runs",
		Title:       "List azero's workflow runs",
		Description: "azero's workflow runs, newest first: id, workflow, status (running, waiting for a human, interrupted, done, failed, aborted), the node where each stands.",
		Annotations: &mcp.ToolAnnotations{Title: "List runs", ReadOnlyHint: true, OpenWorldHint: &no},
	}, s.runs))
}

// actor names who writes in the audit log: the MCP client.
func actor(req *mcp.CallToolRequest) string {
	if info := req.ClientInfo(); info != nil && info.Name != "" {
		return "mcp:" + info.Name
	}
	return "mcp"
}
