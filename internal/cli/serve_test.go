package cli

// End-to-end checks of `azero serve` (issue 14) with real azero processes:
// the demo waits, a headless chromium shows its diff and merges it when
// approve is typed on the page; the JSON API prints the command line's
// documents; a run at a terminal is answered from the API; the token file;
// notifications.

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
	"github.com/azero-dev/azero/internal/web/webtest"
)

func TestServeFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want *ServeOptions
	}{
		{"defaults to loopback", nil, &ServeOptions{Addr: "127.0.0.1:7077"}},
		{"another address", []string{"--addr", "0.0.0.0:8080"}, &ServeOptions{Addr: "0.0.0.0:8080"}},
		{"a free port", []string{"--addr", "127.0.0.1:0"}, &ServeOptions{Addr: "127.0.0.1:0"}},
		{"a token file", []string{"--token-file", "/s/serve.token"}, &ServeOptions{Addr: "127.0.0.1:7077", TokenFile: "/s/serve.token"}},
		{"no port", []string{"--addr", "127.0.0.1"}, nil},
		{"not a port", []string{"--addr", "127.0.0.1:http-alt-x"}, nil},
		{"a URL", []string{"--addr", "http://127.0.0.1:7077"}, nil},
		{"an argument", []string{"now"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, f, err := parseFlags(NewCmdServe, tt.args)
			if tt.want == nil {
				wantUsageError(t, err, got != nil)
				return
			}
			if err != nil || got == nil || got.Addr != tt.want.Addr || got.TokenFile != tt.want.TokenFile || got.Engine != tt.want.Engine {
				t.Fatalf("options %+v, %v; want %+v", got, err, tt.want)
			}
			if got.IO != f.IO || got.Env != f.Env() || got.Now == nil || got.Writer == nil || got.OnInterrupt == nil {
				t.Errorf("dependencies not bound: %+v", got)
			}
		})
	}
}

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7077": true, "127.0.0.2:1": true, "[::1]:7077": true, "localhost:7077": true,
		"0.0.0.0:7077": false, "[::]:7077": false, ":7077": false, "192.168.1.10:7077": false, "10.0.0.1:80": false,
	} {
		if got := loopbackOnly(addr); got != want {
			t.Errorf("loopbackOnly(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestPageURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:7077":  "http://127.0.0.1:7077/?token=T",
		"[::1]:7077":      "http://[::1]:7077/?token=T",
		"192.168.1.10:80": "http://192.168.1.10:80/?token=T",
		"0.0.0.0:7077":    "http://127.0.0.1:7077/?token=T",
		"[::]:7077":       "http://127.0.0.1:7077/?token=T",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageURL(tcp, "T"); got != want {
			t.Errorf("pageURL(%s) = %s, want %s", addr, got, want)
		}
	}
}

// By default azero serve listens on loopback and says nothing more;
// another address is warned about, and its URL line still opens the page
// (through loopback when it listens on every address).
func TestServeWarnsOffLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		warn bool
	}{
		{"loopback", nil, false},
		{"every address", []string{"--addr", "0.0.0.0:0"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startServe(t, t.TempDir(), tt.args...)
			startup := srv.linesUntil(t, "stop with Ctrl-C")
			warned := strings.Contains(startup, "azero serve: warning: listening on 0.0.0.0:")
			if warned != tt.warn || tt.warn && !strings.Contains(startup, "not only on this machine's loopback") {
				t.Errorf("warned %v, want %v:\n%s", warned, tt.warn, srv.stderr)
			}
			if code := srv.api(t, "GET", "/api/runs", "", nil); code != http.StatusOK {
				t.Errorf("GET /api/runs through the URL printed: %d", code)
			}
		})
	}
}

// server is a running `azero serve`.
type server struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	token  string
	stderr *strings.Builder
	lines  chan string
	done   chan struct{}
	code   int
}

var serveURL = regexp.MustCompile(`^http://(127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)$`)

// startServe starts `azero serve` on a free loopback port and waits for
// the line with its URL.
func startServe(t *testing.T, state string, args ...string) *server {
	t.Helper()
	return startServeWith(t, state, nil, args...)
}

// startServeWith is startServe with extra settings in serve's environment
// (the editor a continued governance run checks for).
func startServeWith(t *testing.T, state string, env []string, args ...string) *server {
	t.Helper()
	s := &server{stderr: &strings.Builder{}, lines: make(chan string, 100), done: make(chan struct{})}
	s.cmd = exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = azeroEnv(state, env...)
	s.cmd.Dir = state
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.stderr.WriteString(sc.Text() + "\n")
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		s.code = exitCode(s.cmd.Wait())
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.After(testenv.Patience)
	for {
		select {
		case line := <-s.lines:
			if m := serveURL.FindStringSubmatch(line); m != nil {
				s.base, s.token = "http://"+m[1], m[2]
				return s
			}
		case <-s.done:
			t.Fatalf("azero serve exited %d before printing its URL:\n%s", s.code, s.stderr)
		case <-deadline:
			t.Fatalf("azero serve printed no URL:\n%s", s.stderr)
		}
	}
}

// linesUntil returns the lines serve printed after its URL, up to the
// first one containing want.
func (s *server) linesUntil(t *testing.T, want string) string {
	t.Helper()
	var b strings.Builder
	deadline := time.After(testenv.Patience)
	for {
		select {
		case line := <-s.lines:
			b.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return b.String()
			}
		case <-s.done:
			t.Fatalf("azero serve exited %d before printing %q:\n%s", s.code, want, s.stderr)
		case <-deadline:
			t.Fatalf("azero serve never printed %q:\n%s", want, s.stderr)
		}
	}
}

// stop sends SIGINT and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(testenv.Patience):
		t.Fatalf("azero serve did not stop:\n%s", s.stderr)
	}
	return s.code
}

// api calls the JSON API with the token and decodes the answer into v.
func (s *server) api(t *testing.T, method, path, body string, v any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("User-Agent", "serve-test-script")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s %s: %d %v\n%s", method, path, resp.StatusCode, err, raw)
		}
	}
	return resp.StatusCode
}

// withoutAge drops what changes with the clock from a runs document.
func withoutAge(t *testing.T, raw []byte) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "age_ms")
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	out, _ := json.Marshal(doc)
	return string(out)
}

// The check: the demo waits; on the page of `azero serve` a
// person sees its diff, a partial word is refused, typing approve merges
// it; the API's documents are the command line's.
func TestServeDemoApprovedInABrowser(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	demo := runAzeroIn(t, state, base, nil, "demo", "--dir", base, "--json")
	if demo.code != ExitNeedsHuman {
		t.Fatalf("demo exit %d, want 3\n%s", demo.code, demo.stderr)
	}
	var out struct {
		RunID string `json:"run_id"`
		Node  string `json:"node"`
	}
	if err := json.Unmarshal([]byte(demo.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, demo.stdout)
	}
	id := out.RunID
	repo := filepath.Join(base, "textkit")
	before := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main"))

	srv := startServe(t, state)

	// The API prints the documents of `azero runs --json` and `azero runs
	// show RUN --json`.
	var listed json.RawMessage
	if code := srv.api(t, "GET", "/api/runs", "", &listed); code != http.StatusOK {
		t.Fatalf("GET /api/runs: %d", code)
	}
	cliList := runAzeroIn(t, state, base, nil, "runs", "--json")
	// The API adds where its page stands in the list.
	var paging struct {
		Runs  json.RawMessage `json:"runs"`
		Total int             `json:"total"`
		Next  string          `json:"next"`
	}
	if err := json.Unmarshal(listed, &paging); err != nil || paging.Total != 1 || paging.Next != "" {
		t.Errorf("GET /api/runs: %v\n%s", err, listed)
	}
	listed, _ = json.Marshal(map[string]json.RawMessage{"runs": paging.Runs})
	if got, want := withoutAge(t, listed), withoutAge(t, []byte(cliList.stdout)); got != want {
		t.Errorf("GET /api/runs\n got %s\nwant %s", got, want)
	}
	var shown json.RawMessage
	if code := srv.api(t, "GET", "/api/runs/"+id, "", &shown); code != http.StatusOK {
		t.Fatalf("GET /api/runs/%s: %d", id, code)
	}
	cliShow := runAzeroIn(t, state, base, nil, "runs", "show", id, "--json")
	if got, want := withoutAge(t, shown), withoutAge(t, []byte(cliShow.stdout)); got != want {
		t.Errorf("GET /api/runs/%s\n got %s\nwant %s", id, got, want)
	}
	if !strings.Contains(string(shown), `"question"`) || !strings.Contains(string(shown), `"prompt"`) {
		t.Errorf("the run's document has no pending question: %s", shown)
	}

	ctx := webtest.Browser(t)
	webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/?token="+srv.token), chromedp.WaitVisible(chromedp.CSS(`tr[data-run="`+id+`"]`)))
	webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/runs/"+id+"/diff"), chromedp.WaitVisible(chromedp.CSS("#diff")))
	diff := webtest.Text(t, ctx, "#diff")
	for _, w := range []string{"diff --git a/textkit/text.go b/textkit/text.go", "func Slugify(s string) string", "textkit/slug_test.go"} {
		if !strings.Contains(diff, w) {
			t.Errorf("the diff page lacks %q:\n%s", w, diff)
		}
	}

	// Every gate that waits is answered on the page, approve typed in
	// full, until the run ends; the first answer is a partial word.
	webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/runs/"+id), chromedp.WaitVisible(chromedp.CSS("#question input[name=answer]")))
	webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#question input[name=answer]"), "appro"),
		chromedp.Submit(chromedp.CSS("#question input[name=answer]")), chromedp.WaitVisible(chromedp.CSS("#answer-error")))
	if r := runByID(t, state, id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("after a partial word the run is %s with answer %s", r.Status, r.Answer)
	}
	deadline := time.Now().Add(testenv.Patience)
	approvals := 0
	for {
		r := runByID(t, state, id)
		if r.Status.Finished() {
			if r.Status != store.StatusDone {
				t.Fatalf("the run ended %s: %s\n%s", r.Status, r.Error, srv.stderr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %s at %s\n%s", r.Status, r.Node, srv.stderr)
		}
		if r.Status == store.StatusWaiting && len(r.Answer) == 0 {
			webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/runs/"+id), chromedp.WaitVisible(chromedp.CSS("#question input[name=answer]")))
			webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#question input[name=answer]"), "approve"),
				chromedp.Submit(chromedp.CSS("#question input[name=answer]")))
			approvals++
			// The answer is taken: posted, or the run moved on.
			for a := runByID(t, state, id); a.Status == store.StatusWaiting && a.Node == r.Node && len(a.Answer) == 0; a = runByID(t, state, id) {
				if time.Now().After(deadline) {
					t.Fatalf("the page's answer never reached the run:\n%s", srv.stderr)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if approvals == 0 || approvals > 2 {
		t.Errorf("%d approvals typed, want 1 or 2 (the diff review, the merge)", approvals)
	}
	after := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main"))
	if after == before {
		t.Fatal("main did not move: nothing was merged")
	}
	if merged := testenv.Git(t, repo, "show", "main:textkit/text.go"); !strings.Contains(merged, "strings.Builder") {
		t.Errorf("main's text.go is not the approved change:\n%s", merged)
	}
	webtest.WaitFor(t, ctx, `document.querySelector('#run-status').dataset.status === 'done'`)

	recs, err := audit.Read(filepath.Join(state, audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	web := 0
	for _, r := range recs {
		if r["event"] == "gate_decision" && r["channel"] == "web" {
			by, _ := r["by"].(string)
			agent, _ := r["user_agent"].(string)
			if r["decision"] != "APPROVED" || !strings.Contains(by, "127.0.0.1:") || !strings.Contains(agent, "HeadlessChrome") || r["remote_addr"] == nil {
				t.Errorf("decision %v", r)
			}
			web++
		}
	}
	if web != approvals {
		t.Errorf("%d web decisions audited, %d approvals typed", web, approvals)
	}
	if code := srv.stop(t); code != ExitOK {
		t.Errorf("azero serve exited %d on SIGINT\n%s", code, srv.stderr)
	}
	if !strings.Contains(srv.stderr.String(), "run "+id+" continued after the answer and is done") {
		t.Errorf("serve's stderr:\n%s", srv.stderr)
	}
}

// A run driven at a terminal is answered from the API: the terminal's
// prompt is withdrawn and it says who answered; the process ends as
// approved.
func TestServeAnswersARunAtATerminal(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	s := startAzero(t, state, dir, nil, "selftest", "--steps", "1", "--dir", dir)
	s.WaitFor(t, "to proceed", 1)
	srv := startServe(t, state)
	var runs struct {
		Runs []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"runs"`
	}
	if code := srv.api(t, "GET", "/api/runs", "", &runs); code != http.StatusOK || len(runs.Runs) != 1 || runs.Runs[0].Status != "running" {
		t.Fatalf("runs: %d %+v", code, runs)
	}
	id := runs.Runs[0].ID
	var res map[string]any
	if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"approve","answer":"approve"}`, &res); code != http.StatusOK || res["continued"] != false {
		t.Fatalf("answer: %d %v", code, res)
	}
	if code := s.exit(t); code != ExitOK {
		t.Fatalf("the terminal's azero exited %d:\n%s", code, s.Text())
	}
	screen := s.Text()
	notice := strings.Index(screen, "approve answered APPROVED on the api channel 127.0.0.1:")
	if notice < 0 || !strings.Contains(screen, "serve-test-script") {
		t.Errorf("the terminal was not told who answered:\n%s", screen)
	} else if !strings.HasSuffix(screen[:notice], "\n") {
		t.Errorf("the notice is printed on the prompt's line:\n%q", screen[max(notice-80, 0):min(notice+80, len(screen))])
	}
	// runs show says which channel answered.
	if show := runAzeroIn(t, state, dir, nil, "runs", "show", id, "--events"); !strings.Contains(show.stdout, "approve answered APPROVED on the api channel") {
		t.Errorf("runs show --events:\n%s", show.stdout)
	}
	if r := runByID(t, state, id); r.Status != store.StatusDone {
		t.Errorf("run %s", r.Status)
	}
	if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"approve","answer":"approve"}`, &res); code != http.StatusConflict {
		t.Errorf("an answer to an ended run: %d %v", code, res)
	}
}

// The token is fresh for each serve and kept in serve.token (0600); a
// second serve reuses it only with --token-file, which must be private.
func TestServeToken(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	first := startServe(t, state)
	path := filepath.Join(state, TokenFileName)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := os.ReadFile(path)
	if info.Mode().Perm() != 0o600 || strings.TrimSpace(string(kept)) != first.token || len(first.token) < 32 {
		t.Fatalf("serve.token %v %q, the URL's token %q", info.Mode().Perm(), kept, first.token)
	}
	copyPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(copyPath, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	second := startServe(t, state, "--token-file", copyPath)
	if second.token != first.token {
		t.Errorf("--token-file: token %q, want %q", second.token, first.token)
	}
	if code := second.api(t, "GET", "/api/runs", "", nil); code != http.StatusOK {
		t.Errorf("the shared token is refused: %d", code)
	}
	third := startServe(t, state)
	if third.token == first.token {
		t.Errorf("a serve without --token-file reused the token")
	}
	if code := first.api(t, "GET", "/api/runs", "", nil); code != http.StatusOK {
		t.Errorf("the first server lost its token: %d", code)
	}
	if err := os.Chmod(copyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAzeroIn(t, state, state, nil, "serve", "--addr", "127.0.0.1:0", "--token-file", copyPath)
	if res.code != ExitError || !strings.Contains(res.stderr, "chmod 600") || strings.Contains(res.stderr, first.token) {
		t.Errorf("a readable token file: exit %d\n%s", res.code, res.stderr)
	}
}

// Notifications: the user's command gets the event as JSON when a run
// waits and when it ends (continued by serve); a failing notifier is
// reported and the run goes on.
func TestServeNotifications(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	writeConfig := func(command string) {
		cfg := filepath.Join(state, "config", "azero", "config.toml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte("[notify]\ncommand = '''"+command+"'''\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(`{ cat; echo; } >> '` + notes + `'`)
	res := runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--dir", dir)
	if res.code != ExitNeedsHuman {
		t.Fatalf("selftest exit %d\n%s", res.code, res.stderr)
	}
	type note struct {
		Event, RunID, Status, Gate string
		Answers                    []string
	}
	read := func() []note {
		raw, _ := os.ReadFile(notes)
		var out []note
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if line == "" {
				continue
			}
			var n struct {
				Event   string   `json:"event"`
				RunID   string   `json:"run_id"`
				Status  string   `json:"status"`
				Gate    string   `json:"gate"`
				Answers []string `json:"answers"`
			}
			if err := json.Unmarshal([]byte(line), &n); err != nil {
				t.Fatalf("notification %q: %v", line, err)
			}
			out = append(out, note{n.Event, n.RunID, n.Status, n.Gate, n.Answers})
		}
		return out
	}
	got := read()
	if len(got) != 1 || got[0].Event != "waiting" || got[0].Gate != "approve" || strings.Join(got[0].Answers, ",") != "approve,reject" {
		t.Fatalf("notifications after the wait: %+v", got)
	}
	id := got[0].RunID

	srv := startServe(t, state)
	if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"approve","answer":"approve"}`, nil); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	deadline := time.Now().Add(testenv.Patience)
	for len(read()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got = read(); len(got) != 2 || got[1].Event != "finished" || got[1].RunID != id || got[1].Status != "done" {
		t.Fatalf("notifications after the answer: %+v", got)
	}
	srv.stop(t)

	// A notifier that fails: reported, and the run waits all the same.
	writeConfig("echo no route to the chat server >&2; exit 7")
	res = runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--dir", dir)
	if res.code != ExitNeedsHuman || !strings.Contains(res.stderr, "notification of run") || !strings.Contains(res.stderr, "no route to the chat server") {
		t.Fatalf("exit %d with a failing notifier:\n%s", res.code, res.stderr)
	}
	recs, err := audit.Read(filepath.Join(state, audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, r := range recs {
		failed = failed || r["event"] == "notify_failed"
	}
	if !failed {
		t.Errorf("the failed notification is not in the audit log")
	}
}

// The webhook gets the same JSON as the command, plus a text line, when a
// run waits and when serve ends it; a webhook that fails is reported
// without its URL (a credential), and the run waits all the same.
func TestServeWebhookNotifications(t *testing.T) {
	t.Parallel()
	type post struct {
		path, contentType string
		doc               map[string]any
	}
	posts := make(chan post, 10)
	failing := false
	var mu sync.Mutex
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc map[string]any
		if err := json.NewDecoder(r.Body).Decode(&doc); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		posts <- post{r.URL.Path, r.Header.Get("Content-Type"), doc}
		mu.Lock()
		defer mu.Unlock()
		if failing {
			http.Error(w, "channel_is_archived", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(hook.Close)
	const secret = "/services/T000/B000/secret-part"
	state, dir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(state, "config", "azero", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[notify]\nwebhook = '"+hook.URL+secret+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	next := func() post {
		t.Helper()
		select {
		case p := <-posts:
			return p
		case <-time.After(testenv.Patience):
			t.Fatal("the webhook was never called")
		}
		return post{}
	}

	res := runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--dir", dir)
	if res.code != ExitNeedsHuman {
		t.Fatalf("selftest exit %d\n%s", res.code, res.stderr)
	}
	p := next()
	id, _ := p.doc["run_id"].(string)
	text, _ := p.doc["text"].(string)
	if p.path != secret || p.contentType != "application/json" || p.doc["event"] != "waiting" || p.doc["gate"] != "approve" ||
		id == "" || !strings.Contains(text, "run "+id) || !strings.Contains(text, "waiting at approve") {
		t.Fatalf("webhook got %+v", p)
	}

	srv := startServe(t, state)
	if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"approve","answer":"approve"}`, nil); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	if p = next(); p.doc["event"] != "finished" || p.doc["run_id"] != id || p.doc["status"] != "done" || p.doc["text"] == "" {
		t.Fatalf("webhook got %+v after the answer", p)
	}
	srv.stop(t)

	mu.Lock()
	failing = true
	mu.Unlock()
	res = runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--dir", dir)
	if p = next(); p.doc["event"] != "waiting" {
		t.Fatalf("webhook got %+v", p)
	}
	if res.code != ExitNeedsHuman || !strings.Contains(res.stderr, "notification of run") || !strings.Contains(res.stderr, "500") ||
		strings.Contains(res.stderr, "secret-part") {
		t.Fatalf("exit %d with a failing webhook:\n%s", res.code, res.stderr)
	}
}

// Ctrl-C on an azero serve that continues no run says it stopped, not
// that it saves a run; one that continues runs names them.
func TestServeSaysWhatCtrlCDoes(t *testing.T) {
	t.Parallel()
	srv := startServe(t, t.TempDir())
	srv.linesUntil(t, "stop with Ctrl-C")
	if code := srv.stop(t); code != ExitOK {
		t.Errorf("azero serve exited %d on SIGINT\n%s", code, srv.stderr)
	}
	if out := srv.stderr.String(); !strings.Contains(out, "\nazero serve: stopped\n") || strings.Contains(out, "saving the run") {
		t.Errorf("an idle azero serve stopped with Ctrl-C says:\n%s", out)
	}
	for _, tt := range []struct {
		driving []string
		want    string
	}{
		{nil, "azero serve: stopped"},
		{[]string{"r1"}, "azero serve: stopping; saving run r1, which it continues (press Ctrl-C again to quit at once)"},
		{[]string{"r1", "r2"}, "azero serve: stopping; saving runs r1, r2, which it continues (press Ctrl-C again to quit at once)"},
	} {
		if got := serveStopping(tt.driving); got != tt.want {
			t.Errorf("serveStopping(%v) = %q, want %q", tt.driving, got, tt.want)
		}
	}
}

// serve's help and the README say how the list pages, which channel an
// answer is recorded with, how connections are bounded and what Ctrl-C
// does, with the numbers the server holds to.
func TestServeDocumentsItsLimits(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	help := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "serve", "--help")
	for name, doc := range map[string]string{"azero serve --help": help.stdout, "README.md": string(readme)} {
		doc = strings.Join(strings.Fields(doc), " ")
		for _, want := range []string{strconv.Itoa(web.DefaultLimit) + " ", "offset", "total", "next",
			strconv.Itoa(web.DefaultMaxConns) + " ", "api", "zone", "RFC 3339", "stopped", "before any body is read"} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
	}
}
