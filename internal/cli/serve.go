package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/web"
)

// DefaultServeAddr is where `azero serve` listens unless told otherwise:
// this machine only.
const DefaultServeAddr = "127.0.0.1:7077"

// TokenFileName is the file in the state directory holding the token of
// the last `azero serve` started without --token-file.
const TokenFileName = "serve.token"

// ServeOptions are the inputs of `azero serve`.
type ServeOptions struct {
	RunDeps
	Now    func() time.Time
	Writer func(auto, force bool) (*safewrite.Writer, error)
	// OnInterrupt sets what azero says on a first Ctrl-C while serve runs.
	OnInterrupt func(note func() string)

	Addr      string
	TokenFile string
}

func NewCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{RunDeps: f.runDeps(), Now: f.Now, Writer: f.writer, OnInterrupt: f.onInterrupt}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7077]",
		Short: "A local web page for runs, diffs and waiting gates, with a JSON API",
		Long: trimLines(`
  Serve a web page over the runs of this state directory: every run with its
  status, workflow, issue, age, cost and what it asks, 50 to a page with how
  many there are and links to older ones; one run with its steps, its events
  as they happen, test results, lineage files and cost; the full diff with the
  diff review's banners; the issue workflow's drafts and verdicts; and every
  gate waiting for a human, with its question. Times show their zone; the
  API's are RFC 3339.

  A gate is answered on the page as at the terminal, in its words: an
  approval needs the word typed in full, a menu offers exactly the gate's
  answers, revise takes feedback. A waiting run answered on the page is
  continued by azero serve itself; a run being driven at a terminal can be
  answered from the page too (the first answer wins, and the other side is
  told). Every decision is in the audit log with its channel (web for the
  page, api for the JSON API), the remote address and user agent, and the
  time it was taken, never before the question was asked.

  On start azero serve prints its URL with a fresh random token,
  http://127.0.0.1:PORT/?token=TOKEN, and keeps the token in
  $AZERO_STATE_DIR/serve.token (mode 0600). Every request needs the token:
  the browser gets it once through the URL, then in an HttpOnly, SameSite
  cookie; scripts send Authorization: Bearer TOKEN. A second azero serve on
  the same store uses the same token only with --token-file.

  JSON API (the documents of 'azero runs --json' and 'azero runs show --json'):
    GET  /api/runs[?status=waiting&workflow=NAME&limit=N&offset=K]
         (50 runs unless told, 0 for all; with total, offset, limit and next)
    GET  /api/runs/RUN[?events=1]
    GET  /api/runs/RUN/events?after=SEQ
    GET  /api/gates
    POST /api/runs/RUN/answer  {"gate": NAME, "answer": TEXT, "feedback": TEXT}
  A wrong or partial word is refused with HTTP 422 and the run keeps waiting;
  an answer to a gate that is not waiting gets 409.

  With --engine temporal (or [engine] kind = "temporal" in the config) the
  page shows the runs on that Temporal cluster instead: their steps, events
  and questions, the worker holding each; an answer goes to the run as a
  Temporal Update, refused before it reaches the run's history when the
  question does not allow it, and the cluster's workers continue the run.

  A request without the token or with a wrong Host header is refused from its
  headers, before any body is read, and its connection closed. Connections
  are bounded in time (headers 10s, a request 30s, a reply 60s, live pages
  extending theirs, idle 2m) and in number (512 at once).

  It listens on this machine only (127.0.0.1) unless --addr names another
  address, which it warns about: the page is plain HTTP. --addr with port 0
  picks a free port. Stop it with Ctrl-C: it says it stopped, or names the
  runs it was continuing, which are saved and can be resumed.`),
		Example: "  azero serve\n" +
			"  azero serve --addr 127.0.0.1:0\n" +
			"  curl -H \"Authorization: Bearer $(cat ~/.local/state/azero/serve.token)\" http://127.0.0.1:7077/api/runs\n" +
			"  azero serve --addr 127.0.0.1:7078 --token-file ~/.local/state/azero/serve.token",
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			return run(cmd, runF, serveRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", DefaultServeAddr, "the address to listen on, HOST:PORT (another host than this machine's loopback is warned about)")
	cmd.Flags().StringVar(&opts.TokenFile, "token-file", "", "use the token in this file (mode 0600) instead of a fresh one, e.g. the serve.token of a running azero serve")
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

func (opts *ServeOptions) validate() error {
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return usagef("--addr %q: want HOST:PORT, such as %s (%v)", opts.Addr, DefaultServeAddr, err)
	}
	if strings.ContainsAny(host, "/ ") {
		return usagef("--addr %q: %q is not a host name or address", opts.Addr, host)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("--addr %q: %q is not a port", opts.Addr, port)
	}
	return nil
}

// loopbackOnly reports whether addr listens on this machine's loopback
// only: an address in 127.0.0.0/8 or ::1, or a name that resolves to such
// addresses only (localhost).
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	eng, err := opts.openHere(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	var poll time.Duration
	if eng.Kind() == runs.Temporal {
		// The runs on Temporal: an answer goes to the run as an Update,
		// and its workers continue it.
		poll = time.Second
	}
	whose := eng.Describe()
	logger, err := opts.Env.Audit()
	if err != nil {
		return err
	}
	stateDir, err := opts.Env.StateDir()
	if err != nil {
		return err
	}
	token, tokenNote, err := serveToken(ctx, opts, stateDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another azero serve running there? choose another --addr)", opts.Addr, err)
	}
	defer ln.Close()
	errOut := &lockedWriter{w: opts.IO.ErrOut}
	srv, err := web.New(web.Options{
		Runs: eng, Token: token, StateDir: stateDir, Log: errOut, Now: opts.Now, Poll: poll,
	})
	if err != nil {
		return err
	}
	// The service continues every run whose answer was accepted, here or
	// before this process started (a server killed after it took one):
	// stopped after the server, it saves the runs it drives.
	stopContinuing := eng.Continue(ctx, func(line string) { fmt.Fprintln(errOut, "azero serve: "+line) }, 0)
	defer stopContinuing()
	opts.OnInterrupt(func() string { return serveStopping(eng.Driving()) })
	// The one line a person or a script looks for comes first.
	fmt.Fprintln(errOut, pageURL(ln.Addr(), token))
	if !loopbackOnly(opts.Addr) {
		fmt.Fprintf(errOut, "azero serve: warning: listening on %s, not only on this machine's loopback: anyone who can reach it and holds the token can answer gates, and plain HTTP is not encrypted\n", listening(opts.Addr, ln.Addr()))
	}
	fmt.Fprintf(errOut, "azero serve: %s; %s; stop with Ctrl-C\n", whose, tokenNote)
	_ = logger.Event(ctx, "serve_started", "", slog.String("addr", ln.Addr().String()), slog.Bool("loopback_only", loopbackOnly(opts.Addr)))
	if err := srv.Serve(ctx, ln, opts.Addr); err != nil {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	stopContinuing()
	_ = logger.Event(context.WithoutCancel(ctx), "serve_stopped", "", slog.String("addr", ln.Addr().String()))
	return nil
}

// serveStopping is what azero serve says when told to stop while it
// continues the runs driving (none: it only stops).
func serveStopping(driving []string) string {
	switch len(driving) {
	case 0:
		return "azero serve: stopped"
	case 1:
		return "azero serve: stopping; saving run " + driving[0] + ", which it continues (press Ctrl-C again to quit at once)"
	}
	return "azero serve: stopping; saving runs " + strings.Join(driving, ", ") + ", which it continues (press Ctrl-C again to quit at once)"
}

// pageURL is the address a person opens: the listening address with the
// token; a server listening on every address is opened through this
// machine's loopback (a browser cannot open http://0.0.0.0 or http://[::]).
func pageURL(addr net.Addr, token string) string {
	host := addr.String()
	if ap, err := netip.ParseAddrPort(host); err == nil && ap.Addr().IsUnspecified() {
		host = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ap.Port()).String()
	}
	return "http://" + host + "/?token=" + token
}

// listening names where a server asked to listen on requested listens:
// the host asked for (Go reports 0.0.0.0 as [::]) with the port it got.
func listening(requested string, got net.Addr) string {
	host, _, err := net.SplitHostPort(requested)
	_, port, err2 := net.SplitHostPort(got.String())
	switch {
	case err != nil || err2 != nil:
		return got.String()
	case host == "":
		return "every address of this machine, port " + port
	}
	return net.JoinHostPort(host, port)
}

// minToken is the shortest token accepted from a file.
const minToken = 32

// serveToken returns the token this server requires: read from tokenFile
// when given (refused unless only its owner can read it), else a fresh
// random one, written to the state directory's serve.token (mode 0600)
// for scripts on this machine. The note says where it is kept.
func serveToken(ctx context.Context, opts *ServeOptions, stateDir string) (token, note string, err error) {
	if opts.TokenFile != "" {
		path := opts.Env.Abs(opts.TokenFile)
		info, err := os.Stat(path)
		if err != nil {
			return "", "", fmt.Errorf("--token-file: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", "", fmt.Errorf("--token-file %s can be read by others (mode %v): chmod 600 it first", path, info.Mode().Perm())
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return "", "", fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(raw))
		if len(token) < minToken || strings.ContainsAny(token, " \t\r\n") {
			return "", "", fmt.Errorf("--token-file %s must hold one token of at least %d characters", path, minToken)
		}
		return token, "the token of " + path, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("make a token: %w", err)
	}
	token = hex.EncodeToString(b)
	w, err := opts.Writer(true, false)
	if err != nil {
		return "", "", err
	}
	res, err := w.Write(ctx, safewrite.Request{Root: stateDir, Path: TokenFileName, Content: []byte(token + "\n"),
		Mode: 0o600, Actor: "azero serve"})
	if err != nil {
		return "", "", fmt.Errorf("keep the token: %w", err)
	}
	// An older file keeps its mode through a replace: make sure it is
	// private.
	if err := os.Chmod(res.Abs, 0o600); err != nil {
		return "", "", fmt.Errorf("keep the token: %w", err)
	}
	return token, "the token is kept in " + filepath.Join(stateDir, TokenFileName) + " (mode 0600)", nil
}

// lockedWriter serialises writes from the server's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
