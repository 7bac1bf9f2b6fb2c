// Package trackertest provides a local server speaking the part of
// GitHub's REST API azero uses, for tests that drive the real go-github
// client.
package trackertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// GitHub is a fake GitHub holding one repository's labels and issues.
// Labels are listed in pages, as GitHub lists them.
type GitHub struct {
	URL   string
	Owner string
	Repo  string
	Token string
	Login string
	// NoUser makes GET /user answer 404, like servers that only implement
	// the repository endpoints (or tokens that cannot read their user).
	NoUser bool

	mu          sync.Mutex
	labels      []string
	issues      []map[string]any
	failCreates []int // status codes for the next issue creations
	requests    []string
}

// NewGitHub starts a server for OWNER/REPO accepting token; it stops when
// the test ends. Unexpected requests fail the test.
func NewGitHub(t testing.TB, owner, repo, token string, labels ...string) *GitHub {
	g := &GitHub{Owner: owner, Repo: repo, Token: token, Login: "azero-bot", labels: labels}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serve(t, w, r) }))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// FailNextCreates makes the next issue creations answer with these status
// codes (a rejected create).
func (g *GitHub) FailNextCreates(codes ...int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failCreates = append(g.failCreates, codes...)
}

// Labels returns the repository's labels.
func (g *GitHub) Labels() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.labels...)
}

// Issues returns the issues filed, as JSON-like maps.
func (g *GitHub) Issues() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]map[string]any(nil), g.issues...)
}

// AddIssue files an issue as a person would on GitHub's page, and returns
// its number. pull makes it a pull request (GitHub numbers both alike).
func (g *GitHub) AddIssue(title, body string, pull bool, labels ...string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.issues) + 1
	ls := []map[string]any{}
	for _, l := range labels {
		ls = append(ls, map[string]any{"name": l})
	}
	is := map[string]any{"number": n, "title": title, "body": body, "labels": ls, "state": "open",
		"html_url": fmt.Sprintf("https://github.example/%s/%s/issues/%d", g.Owner, g.Repo, n), "user": map[string]any{"login": "someone"}}
	if pull {
		is["pull_request"] = map[string]any{"url": fmt.Sprintf("https://api.github.example/repos/%s/%s/pulls/%d", g.Owner, g.Repo, n)}
	}
	g.issues = append(g.issues, is)
	return n
}

// Requests returns "METHOD /path" of every request served.
func (g *GitHub) Requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.requests...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// intParam reads a positive whole number from the query, or def.
func intParam(r *http.Request, name string, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n < 1 {
		return def
	}
	return n
}

func (g *GitHub) serve(t testing.TB, w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+g.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	repoPath := "/repos/" + g.Owner + "/" + g.Repo
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/user" && g.NoUser:
		writeJSON(w, 404, map[string]any{"message": "Not Found"})
	case r.Method == http.MethodGet && r.URL.Path == "/user":
		writeJSON(w, 200, map[string]any{"login": g.Login, "id": 1})
	case r.Method == http.MethodGet && r.URL.Path == repoPath:
		writeJSON(w, 200, map[string]any{"id": 7, "name": g.Repo, "full_name": g.Owner + "/" + g.Repo, "has_issues": true})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/repos/") && strings.Count(r.URL.Path, "/") == 3:
		writeJSON(w, 404, map[string]any{"message": "Not Found"})
	case r.Method == http.MethodGet && r.URL.Path == repoPath+"/labels":
		// Paged as GitHub pages: per_page (default 30, at most 100) and
		// page, with a Link header naming the next page.
		per, page := intParam(r, "per_page", 30), intParam(r, "page", 1)
		per = min(per, 100)
		out := []map[string]any{}
		for i := (page - 1) * per; i < min(page*per, len(g.labels)); i++ {
			out = append(out, map[string]any{"id": i + 1, "name": g.labels[i], "color": "ededed"})
		}
		if page*per < len(g.labels) {
			next := fmt.Sprintf("http://%s%s?per_page=%d&page=%d", r.Host, r.URL.Path, per, page+1)
			w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", next))
		}
		writeJSON(w, 200, out)
	case r.Method == http.MethodPost && r.URL.Path == repoPath+"/labels":
		var body struct{ Name, Color string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" {
			writeJSON(w, 422, map[string]any{"message": "Validation Failed"})
			return
		}
		for _, l := range g.labels {
			if strings.EqualFold(l, body.Name) {
				writeJSON(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]any{{"resource": "Label", "code": "already_exists", "field": "name"}}})
				return
			}
		}
		g.labels = append(g.labels, body.Name)
		writeJSON(w, 201, map[string]any{"id": len(g.labels), "name": body.Name, "color": body.Color})
	case r.Method == http.MethodGet && r.URL.Path == repoPath+"/issues":
		// Newest first, like sort=created&direction=desc.
		out := []map[string]any{}
		for i := len(g.issues) - 1; i >= 0; i-- {
			out = append(out, g.issues[i])
		}
		writeJSON(w, 200, out)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, repoPath+"/issues/"):
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, repoPath+"/issues/"))
		if err != nil || n < 1 || n > len(g.issues) {
			writeJSON(w, 404, map[string]any{"message": "Not Found"})
			return
		}
		writeJSON(w, 200, g.issues[n-1])
	case r.Method == http.MethodPost && r.URL.Path == repoPath+"/issues":
		if len(g.failCreates) > 0 {
			code := g.failCreates[0]
			g.failCreates = g.failCreates[1:]
			writeJSON(w, code, map[string]any{"message": fmt.Sprintf("simulated failure %d", code)})
			return
		}
		var body struct {
			Title  string
			Body   string
			Labels []string
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Title == "" {
			writeJSON(w, 422, map[string]any{"message": "Validation Failed: title is missing"})
			return
		}
		for _, l := range body.Labels {
			found := false
			for _, have := range g.labels {
				found = found || strings.EqualFold(have, l)
			}
			if !found {
				writeJSON(w, 422, map[string]any{"message": "Validation Failed: label " + l + " does not exist"})
				return
			}
		}
		n := len(g.issues) + 1
		labels := []map[string]any{}
		for _, l := range body.Labels {
			labels = append(labels, map[string]any{"name": l})
		}
		is := map[string]any{"number": n, "title": body.Title, "body": body.Body, "labels": labels, "state": "open",
			"html_url": fmt.Sprintf("https://github.example/%s/%s/issues/%d", g.Owner, g.Repo, n), "user": map[string]any{"login": g.Login}}
		g.issues = append(g.issues, is)
		writeJSON(w, 201, is)
	default:
		t.Errorf("fake GitHub: unexpected request %s %s", r.Method, r.URL.String())
		writeJSON(w, 404, map[string]any{"message": "Not Found"})
	}
}
