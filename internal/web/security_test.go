package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/store"
)

// Every request without the token gets 401, whatever it asks for, and
// nothing changes.
func TestEveryRequestNeedsTheToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	tests := []struct {
		name, method, path, body string
		headers                  map[string]string
	}{
		{"runs page", "GET", "/", "", nil},
		{"gates page", "GET", "/gates", "", nil},
		{"run page", "GET", "/runs/" + id, "", nil},
		{"diff page", "GET", "/runs/" + id + "/diff", "", nil},
		{"stylesheet", "GET", "/assets/style.css", "", nil},
		{"script", "GET", "/assets/app.js", "", nil},
		{"live events", "GET", "/runs/" + id + "/events", "", nil},
		{"unknown page", "GET", "/nothing-here", "", nil},
		{"api runs", "GET", "/api/runs", "", nil},
		{"api run", "GET", "/api/runs/" + id, "", nil},
		{"api answer", "POST", "/api/runs/" + id + "/answer", `{"gate":"review","answer":"approve"}`, nil},
		{"form answer", "POST", "/runs/" + id + "/answer", "gate=review&answer=approve", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"wrong bearer", "GET", "/api/runs", "", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(testToken))}},
		{"token prefix", "GET", "/api/runs", "", map[string]string{"Authorization": "Bearer " + testToken[:20]}},
		{"basic scheme", "POST", "/api/runs/" + id + "/answer", `{"gate":"review","answer":"approve"}`, map[string]string{"Authorization": "Basic " + testToken}},
		{"wrong cookie", "GET", "/", "", map[string]string{"Cookie": "azero_" + portOf(t, f) + "=nope"}},
		{"cookie of another port", "GET", "/", "", map[string]string{"Cookie": "azero_1=" + testToken}},
		{"wrong query token", "GET", "/?token=nope", "", nil},
		{"query token on a post", "POST", "/api/runs/" + id + "/answer?token=" + testToken, `{"gate":"review","answer":"approve"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.request(tt.method, tt.path, tt.body, tt.headers)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s %s = %d, want 401\n%s", tt.method, tt.path, resp.StatusCode, body)
			}
			if strings.Contains(body, "Merge this change") {
				t.Errorf("the refusal shows the run's question")
			}
		})
	}
	if r := f.run(id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("run %s is %s with answer %s after requests without the token", id, r.Status, r.Answer)
	}
}

func portOf(t *testing.T, f *fixture) string {
	t.Helper()
	u, err := url.Parse(f.http.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// The browser gets the token once through the URL: the server moves it to
// an HttpOnly, SameSite=Strict cookie and sends the browser to the same
// page without it.
func TestTheURLTokenBecomesACookie(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	resp, _ := f.request("GET", "/runs/"+id+"?token="+testToken+"&x=1", "", nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d, want 303", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/runs/"+id+"?x=1" {
		t.Errorf("Location %q keeps the token or loses the page", loc)
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == "azero_"+portOf(t, f) {
			c = k
		}
	}
	if c == nil || c.Value != testToken || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie %+v, want the token, HttpOnly, SameSite=Strict, Path=/", c)
	}
	// Opened from another site's link, the browser is sent on by a page
	// of this server (a redirect would not carry the Strict cookie).
	resp2, body2 := f.request("GET", "/runs/"+id+"?token="+testToken+"&x=1", "", map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp2.StatusCode != http.StatusOK || !strings.Contains(body2, `<meta http-equiv="refresh" content="0;url=/runs/`+id+`?x=1">`) ||
		strings.Contains(body2, testToken) || len(resp2.Cookies()) != 1 || !resp2.Cookies()[0].HttpOnly || resp2.Cookies()[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("from another site: %d %v\n%s", resp2.StatusCode, resp2.Cookies(), body2)
	}
	// The page it sends the browser to is on this server.
	if resp, _ := f.request("GET", "//evil.example/?token="+testToken, "", nil); resp.Header.Get("Location") != "/evil.example/" {
		t.Errorf("a URL naming another host redirects to %q", resp.Header.Get("Location"))
	}
	if rp := resp.Header.Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("Referrer-Policy %q: the token could leak through a link", rp)
	}
	resp, body := f.request("GET", "/runs/"+id, "", map[string]string{"Cookie": c.Name + "=" + c.Value})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Merge this change?") {
		t.Fatalf("with the cookie: %d\n%s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

// A request naming another host (a DNS rebinding page) is refused even
// with the token.
func TestHostHeaderMustNameTheServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := portOf(t, f)
	tests := []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusForbidden},
		{"attacker.localhost.example:" + port, http.StatusForbidden},
		{"127.0.0.1:1", http.StatusForbidden},
		{"127.0.0.1", http.StatusForbidden},
		{"10.0.0.1:" + port, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + testToken, "Host": tt.host}
			resp, body := f.request("GET", "/api/runs", "", h)
			if resp.StatusCode != tt.want {
				t.Fatalf("Host %q: %d, want %d\n%s", tt.host, resp.StatusCode, tt.want, body)
			}
		})
	}
}

// A form posted with the cookie must carry the CSRF token and come from
// this site; scripts with the bearer token need neither.
func TestFormsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cookie := "azero_" + portOf(t, f) + "=" + testToken
	form := map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
	id := f.waitingRun(state{})
	csrf := csrfOf(t, f, id)
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		want    int
	}{
		{"no csrf field", "gate=review&answer=approve", form, http.StatusForbidden},
		{"wrong csrf", "gate=review&answer=approve&csrf=" + strings.Repeat("0", len(csrf)), form, http.StatusForbidden},
		{"the token is not the csrf", "gate=review&answer=approve&csrf=" + testToken, form, http.StatusForbidden},
		{"another site", "gate=review&answer=approve&csrf=" + csrf, with(form, "Origin", "http://evil.example"), http.StatusForbidden},
		{"a cross-site fetch", "gate=review&answer=approve&csrf=" + csrf, with(form, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden},
		{"json with the cookie and no csrf header", `{"gate":"review","answer":"approve"}`, map[string]string{"Cookie": cookie}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/runs/" + id + "/answer"
			if strings.HasPrefix(tt.body, "{") {
				path = "/api/runs/" + id + "/answer"
			}
			resp, body := f.request("POST", path, tt.body, tt.headers)
			if resp.StatusCode != tt.want {
				t.Fatalf("%d, want %d\n%s", resp.StatusCode, tt.want, body)
			}
			if r := f.run(id); len(r.Answer) != 0 {
				t.Fatalf("an answer was recorded: %s", r.Answer)
			}
		})
	}
	// The same form with its token is taken, from the page's own origin.
	resp, body := f.request("POST", "/runs/"+id+"/answer", "gate=review&answer=approve&csrf="+csrf,
		with(form, "Origin", f.http.URL))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("with the CSRF token: %d\n%s", resp.StatusCode, body)
	}
	f.waitsAt(id, "edit")
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range h {
		if a != k {
			out[a] = b
		}
	}
	return out
}

// csrfOf reads the CSRF token from the run's page.
func csrfOf(t *testing.T, f *fixture, id string) string {
	t.Helper()
	_, body := f.request("GET", "/runs/"+id, "", bearer)
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	if !ok {
		t.Fatalf("the page has no CSRF field:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	if len(tok) < 32 || strings.Contains(tok, testToken) {
		t.Fatalf("CSRF token %q", tok)
	}
	return tok
}

// Bodies are size-limited, whether they say their length or not.
func TestLargeBodiesAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	feedback := strings.Repeat("x", 2<<20)
	tests := []struct {
		name, path, body, contentType string
		chunked                       bool
	}{
		{"json with its length", "/api/runs/" + id + "/answer", `{"gate":"review","answer":"revise","feedback":"` + feedback + `"}`, "application/json", false},
		{"json sent in chunks", "/api/runs/" + id + "/answer", `{"gate":"review","answer":"revise","feedback":"` + feedback + `"}`, "application/json", true},
		{"a form sent in chunks", "/runs/" + id + "/answer", "gate=review&answer=revise&feedback=" + feedback, "application/x-www-form-urlencoded", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				// A reader of unknown length: the client sends it chunked,
				// without Content-Length.
				body = io.MultiReader(body)
			}
			req, err := http.NewRequestWithContext(t.Context(), "POST", f.http.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", tt.contentType)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if (req.ContentLength <= 0) != tt.chunked {
				t.Fatalf("Content-Length %d", req.ContentLength)
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", resp.StatusCode)
			}
		})
	}
	if r := f.run(id); len(r.Answer) != 0 || r.Status != store.StatusWaiting {
		t.Fatalf("run changed: %s, answer %s", r.Status, r.Answer)
	}
}
