package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
)

// served is a fixture whose server also serves on a listener of its own
// through Serve, as azero serve does (with its timeouts and its bound on
// connections); it returns that listener's address.
func served(t *testing.T, opt func(*web.Options)) (*fixture, string) {
	t.Helper()
	f := newFixtureWith(t, nil, opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln, "127.0.0.1:0") }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return f, ln.Addr().String()
}

// stalled sends a request's line and headers announcing a body of 100
// bytes, and never sends the body.
func stalled(t *testing.T, addr, method, path string, headers map[string]string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var b strings.Builder
	host := addr
	if h, ok := headers["Host"]; ok {
		host = h
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n", method, path, host)
	for k, v := range headers {
		if k != "Host" {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	return c
}

// reply reads the reply on c and then the end of the connection, failing
// after testenv.Patience: the status and whether the server closed it.
func reply(t *testing.T, c net.Conn) (int, bool) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(testenv.Patience)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.StatusCode, errors.Is(err, io.EOF)
}

// A request refused for its token or its Host is answered at once,
// without waiting for the body it announced, and its connection closed.
func TestRefusalsDoNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	// The bound on reading a request would end a stall only after the
	// test gave up: the refusals must not wait for it.
	f, addr := served(t, func(o *web.Options) { o.Timeouts.Read = 2 * testenv.Patience })
	id := f.waitingRun(state{})
	tests := []struct {
		name, method, path string
		headers            map[string]string
		want               int
	}{
		{"no token", "POST", "/api/runs/" + id + "/answer", nil, http.StatusUnauthorized},
		{"a wrong token", "POST", "/api/runs/" + id + "/answer", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(testToken))}, http.StatusUnauthorized},
		{"a form without the token", "POST", "/runs/" + id + "/answer", nil, http.StatusUnauthorized},
		{"a page asked with a body", "GET", "/", nil, http.StatusUnauthorized},
		{"a wrong Host", "POST", "/api/runs/" + id + "/answer", map[string]string{"Authorization": "Bearer " + testToken, "Host": "evil.example"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			for k, v := range tt.headers {
				h[k] = v
			}
			c := stalled(t, addr, tt.method, tt.path, h)
			if code, closed := reply(t, c); code != tt.want || !closed {
				t.Errorf("status %d (want %d), connection closed: %v", code, tt.want, closed)
			}
		})
	}
}

// Many requests without the token that never send their body do not
// keep a good request from being served, with a bound on connections.
func TestStalledRequestsDoNotStarveGoodOnes(t *testing.T) {
	t.Parallel()
	const bound, stalls = 4, 40
	f, addr := served(t, func(o *web.Options) { o.MaxConns, o.Timeouts.Read = bound, 2*testenv.Patience })
	id := f.waitingRun(state{})
	var wg sync.WaitGroup
	for range stalls {
		wg.Go(func() { stalled(t, addr, "POST", "/api/runs/"+id+"/answer", nil) })
	}
	wg.Wait()
	client := &http.Client{Timeout: testenv.Patience}
	req, err := http.NewRequest("GET", "http://"+addr+"/api/runs", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the good request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the good request: %d", resp.StatusCode)
	}
}

// A client with the token that announces a body and stalls is cut when
// the read bound ends; a live stream outlives the read and write bounds.
func TestTimeoutsCutStallsNotStreams(t *testing.T) {
	t.Parallel()
	const bound = 100 * time.Millisecond
	f, addr := served(t, func(o *web.Options) { o.Timeouts = web.Timeouts{Read: bound, Write: bound} })
	id := f.waitingRun(state{})

	c := stalled(t, addr, "POST", "/api/runs/"+id+"/answer", map[string]string{"Authorization": "Bearer " + testToken})
	if err := c.SetReadDeadline(time.Now().Add(testenv.Patience)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("the stalled request's connection: %v", err)
	}
	if r := f.run(id); len(r.Answer) != 0 {
		t.Fatalf("a stalled request answered: %s", r.Answer)
	}

	evs, err := f.st.Events(t.Context(), id, 0, 0)
	if err != nil || len(evs) == 0 {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/runs/%s/events?after=%d", addr, id, evs[len(evs)-1].Seq), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Past both bounds, the stream still follows the run.
	time.Sleep(5 * bound)
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: run") {
			return
		}
	}
	t.Fatalf("the stream ended without an event: %v", sc.Err())
}
