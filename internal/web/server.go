// Package web is the page and JSON API of `azero serve`: the runs, one
// run as it happens, the diff a gate shows, the issue workflow's drafts
// and verdicts, and every gate waiting for a human, with a form to answer
// it. It is a second door to the same gates as the terminal, keeping
// every rule of the first. It reaches runs only through the run service
// (Runs: package runs): it reads them from the service's source, learns
// what a workflow's run shows from the catalog's summaries, and posts
// every answer through the service's one answer path, which continues
// the run; it imports no workflow.
//
// Invariants:
//   - Every request carries the server's token (a bearer header, or the
//     cookie set when the browser first opened the URL with ?token=);
//     anything else gets 401. The Host header must name the address the
//     server listens on (DNS rebinding); a form posted with the cookie
//     must carry the CSRF token derived from the server's token. Both are
//     checked on the request's headers, before any of its body is read: a
//     refusal is sent at once and ends the connection.
//   - Every connection is bounded in time (Timeouts: headers, the whole
//     request, the reply, idleness) except live streams, whose write
//     bound is extended message by message; the connections served at
//     once are bounded in number (MaxConns).
//   - An answer is what a human typed: a word question's word in full
//     (human.Parse refuses a partial or wrong word, 422), a menu's key, the
//     text an option needs. No request answers without a field typed or
//     chosen by a person, and there is no setting that approves.
//   - An answer from the page's form is recorded with channel web, one
//     from the JSON API with channel api (human.ChannelWeb, ChannelAPI),
//     sealed with the answer; a client cannot name its channel. It is
//     stamped by the server's clock when taken, never before its question
//     was asked.
//   - An answer is posted, through the service, for the question the run
//     asks now (store.PostAnswer: the first answer, from any channel, wins, sealed
//     for the question's nonce); a gate that is not waiting takes none.
//     Only an answer whose seal verifies is shown as an answer: one written
//     into the store by anything else is recorded as answer_forged when an
//     answer is posted over it, and never shown.
//   - The JSON documents of /api/runs and /api/runs/RUN are those of
//     `azero runs --json` and `azero runs show RUN --json` (package rundoc);
//     /api/runs adds where its page stands (total, offset, limit, next).
//   - Over the store, a list costs a page of rows, read in a query or two
//     whatever the number of runs (store.ListHeads): no question is
//     decoded and no query made per run listed.
package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/runs"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// MaxBody is the largest request body accepted (an answer with edited
// files); larger ones get 413.
const MaxBody = 1 << 20

// Source is what the pages read runs from: the store (*store.Store), or
// the runs of the Temporal engine presented the same way.
type Source = runs.Source

// Runs is the run service as the page uses it (a runs.Engine is one):
// where runs are read, what each workflow shows of its runs, the one
// answer path, and which runs the service continues in this process.
type Runs interface {
	Source() runs.Source
	Workflows() runs.Workflows
	// Answer takes an answer through the service's one answer path: it is
	// checked as every channel's is (runs.ErrInvalidAnswer,
	// runs.ErrNotWaiting), stamped, sealed, posted and audited, and the
	// run continued when nothing drives it.
	Answer(ctx context.Context, ref string, r runs.Reply) (runs.Accepted, error)
	Driving() []string
}

// Options configure a Server.
type Options struct {
	Runs Runs
	// Token is the secret every request must carry (at least 32
	// characters).
	Token string
	// StateDir holds the runs' lineage (StateDir/runs/RUN).
	StateDir string
	// Log receives a line for each problem; nil discards.
	Log io.Writer
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Location is the time zone the pages show times in, each with its
	// zone's name; time.Local by default. The API's times are RFC 3339.
	Location *time.Location
	// Poll is how often live views look for news; default 500 ms.
	Poll time.Duration
	// Timeouts bound what a client may hold of the server; zero fields
	// take DefaultTimeouts'.
	Timeouts Timeouts
	// MaxConns bounds the connections served at once (default
	// DefaultMaxConns): a client that opens more waits for one to end. Every connection is
	// bounded in time (Timeouts) except live streams, which browsers open
	// a few of.
	MaxConns int
}

// Timeouts bound each connection of a Server.
type Timeouts struct {
	// Header bounds the reading of a request's headers.
	Header time.Duration
	// Read bounds the reading of a whole request, its body included. A
	// live stream, which has no body, is not bounded.
	Read time.Duration
	// Write bounds the writing of a reply; a live stream's bound is
	// extended before each message it sends, so that only a client that
	// stops reading is cut.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request.
	Idle time.Duration
}

// DefaultMaxConns is how many connections a Server serves at once unless
// told otherwise.
const DefaultMaxConns = 512

// DefaultTimeouts are the timeouts of a Server unless told otherwise.
var DefaultTimeouts = Timeouts{Header: 10 * time.Second, Read: 30 * time.Second, Write: time.Minute, Idle: 2 * time.Minute}

// Server serves the pages and the API.
type Server struct {
	opts  Options
	src   Source // opts.Runs.Source()
	pages *template.Template
	csrf  string

	ctx   context.Context // ends when the server stops
	stop  context.CancelFunc
	logMu sync.Mutex
}

// New returns a server over opts.
func New(opts Options) (*Server, error) {
	if opts.Runs == nil || opts.Runs.Source() == nil {
		return nil, errors.New("web: no runs")
	}
	if len(opts.Token) < 32 {
		return nil, errors.New("web: the token must have at least 32 characters")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t, d := &opts.Timeouts, DefaultTimeouts
	t.Header, t.Read, t.Write, t.Idle = orDefault(t.Header, d.Header), orDefault(t.Read, d.Read), orDefault(t.Write, d.Write), orDefault(t.Idle, d.Idle)
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	mac := hmac.New(sha256.New, []byte(opts.Token))
	mac.Write([]byte("azero serve csrf"))
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{opts: opts, src: opts.Runs.Source(), csrf: hex.EncodeToString(mac.Sum(nil)), ctx: ctx, stop: stop}
	pages, err := template.New("").Funcs(funcs).Funcs(template.FuncMap{"clock": s.clock, "stamp": s.stamp}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		stop()
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	s.pages = pages
	return s, nil
}

func orDefault(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// Handler returns the server's handler for requests to a server listening
// at listen (the address the listener got, "127.0.0.1:7077") as asked for
// by requested (the --addr given, which may name a host or no host).
func (s *Server) Handler(listen, requested string) (http.Handler, error) {
	hosts, err := allowedHosts(listen, requested)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(listen)
	mux := http.NewServeMux()
	assets, _ := fs.Sub(assetFS, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /gates", s.gatesPage)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("GET /runs/{id}/diff", s.diffPage)
	mux.HandleFunc("GET /runs/{id}/lineage/{path...}", s.lineagePage)
	mux.HandleFunc("GET /runs/{id}/trail/{name}", s.trailPage)
	mux.HandleFunc("GET /runs/{id}/events", s.runStream)
	mux.HandleFunc("GET /events", s.listStream)
	mux.HandleFunc("POST /runs/{id}/answer", s.formAnswer)
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /api/gates", s.apiGates)
	mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
	mux.HandleFunc("GET /api/runs/{id}/events", s.apiEvents)
	mux.HandleFunc("POST /api/runs/{id}/answer", s.apiAnswer)
	return s.guard(hosts, "azero_"+port, mux), nil
}

// Serve serves on ln until ctx ends, then stops taking requests and ends
// the live streams. requested is the address asked for (see Handler).
// The runs answered here are continued by the service (Runs), not by the
// server: whoever started the service stops it.
func (s *Server) Serve(ctx context.Context, ln net.Listener, requested string) error {
	h, err := s.Handler(ln.Addr().String(), requested)
	if err != nil {
		return err
	}
	to := s.opts.Timeouts
	srv := &http.Server{
		Handler: h,
		// Bodies are bounded in size too (MaxBody). The live streams lift
		// the read bound and extend the write bound as they go.
		ReadHeaderTimeout: to.Header,
		ReadTimeout:       to.Read,
		WriteTimeout:      to.Write,
		IdleTimeout:       to.Idle,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limitListener(ln, s.opts.MaxConns)) }()
	select {
	case err := <-errc:
		s.shutdown()
		return err
	case <-ctx.Done():
	}
	s.shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return nil
}

// shutdown ends the live streams.
func (s *Server) shutdown() { s.stop() }

// Close stops what the server runs in the background (for servers used
// through Handler alone).
func (s *Server) Close() { s.shutdown() }

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "azero serve: "+format+"\n", args...)
}
