package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/web"
)

// pagedFixture has seven runs, newest first: three interrupted (created,
// never driven), then four waiting at review. The server reads them
// through wrap (nil: the store).
func pagedFixture(t *testing.T, wrap func(web.Source) web.Source) (*fixture, []string) {
	t.Helper()
	f := newFixtureOver(t, wrap)
	var ids []string
	for range 4 {
		ids = append(ids, f.waitingRun(state{}))
	}
	for range 3 {
		id, err := flow.Create(t.Context(), f.eng, graph(), &state{}, flow.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	return f, ids
}

type runsPage struct {
	Runs []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"runs"`
	Total  int    `json:"total"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Next   string `json:"next"`
}

// plainSource is a source that lists runs only as the runs on Temporal
// do: whole, from the newest, whatever a filter says beyond its workflow,
// status and limit.
type plainSource struct{ web.Source }

func (p plainSource) ListRuns(ctx context.Context, f store.Filter) ([]store.Run, error) {
	f.Offset, f.Brief, f.Asking = 0, false, false
	return p.Source.ListRuns(ctx, f)
}

// sources are the ways a server reads runs: the store, and a source like
// the runs on Temporal.
var sources = map[string]func(web.Source) web.Source{
	"store":        nil,
	"plain source": func(s web.Source) web.Source { return plainSource{s} },
}

// The API pages through the runs: each page says how many runs there are
// in all and where the next page is, until the last.
func TestTheAPIPagesThroughRuns(t *testing.T) {
	t.Parallel()
	for name, wrap := range sources {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testAPIPages(t, wrap)
		})
	}
}

func testAPIPages(t *testing.T, wrap func(web.Source) web.Source) {
	f, ids := pagedFixture(t, wrap)
	tests := []struct {
		name, first  string
		want         []string
		pages, total int
	}{
		{"pages of three", "/api/runs?limit=3", ids, 3, 7},
		{"all at once", "/api/runs?limit=0", ids, 1, 7},
		{"from the middle", "/api/runs?limit=4&offset=2", ids[2:], 2, 7},
		{"the default page", "/api/runs", ids, 1, 7},
		{"a status stored", "/api/runs?status=waiting&limit=3", ids[3:], 2, 4},
		{"a status told after reading", "/api/runs?status=interrupted&limit=2", ids[:3], 2, 3},
		{"past the end", "/api/runs?offset=9", nil, 1, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			path, pages := tt.first, 0
			for path != "" {
				pages++
				resp, body := f.request("GET", path, "", bearer)
				var p runsPage
				if err := json.Unmarshal([]byte(body), &p); err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s = %d %v\n%s", path, resp.StatusCode, err, body)
				}
				if p.Total != tt.total {
					t.Errorf("GET %s: total %d, want %d", path, p.Total, tt.total)
				}
				for _, r := range p.Runs {
					got = append(got, r.ID)
				}
				if pages > 10 {
					t.Fatalf("the pages never end: %s", path)
				}
				path = p.Next
			}
			if !slices.Equal(got, tt.want) || pages != tt.pages {
				t.Errorf("runs %v in %d pages, want %v in %d", got, pages, tt.want, tt.pages)
			}
		})
	}
	for _, bad := range []string{"offset=-1", "offset=x", "limit=-2", "status=sleeping"} {
		if code, doc := f.api("GET", "/api/runs?"+bad, ""); code != http.StatusBadRequest {
			t.Errorf("?%s: %d %v", bad, code, doc)
		}
	}
}

// The runs page says which runs it shows of how many, and links to the
// newer and older pages, keeping the filter.
func TestTheRunsPageLinksToOlderRuns(t *testing.T) {
	t.Parallel()
	for name, wrap := range sources {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testPageLinks(t, wrap)
		})
	}
}

func testPageLinks(t *testing.T, wrap func(web.Source) web.Source) {
	f, ids := pagedFixture(t, wrap)
	tests := []struct {
		path, count, newer, older string
		shown                     []string
	}{
		{"/?limit=3", "Runs 1–3 of 7, newest first", "", "/?limit=3&amp;offset=3", ids[:3]},
		{"/?limit=3&offset=3", "Runs 4–6 of 7, newest first", "/?limit=3", "/?limit=3&amp;offset=6", ids[3:6]},
		{"/?limit=3&offset=6", "Runs 7–7 of 7, newest first", "/?limit=3&amp;offset=3", "", ids[6:]},
		{"/?status=waiting&limit=3&offset=3", "Runs 4–4 of 4, newest first", "/?limit=3&amp;status=waiting", "", ids[6:]},
		{"/?status=interrupted&limit=2", "Runs 1–2 of 3, newest first", "", "/?limit=2&amp;offset=2&amp;status=interrupted", ids[:2]},
		{"/", "7 runs", "", "", ids},
		{"/?limit=5&offset=5", "Runs 6–7 of 7, newest first", "/?limit=5", "", ids[5:]},
		{"/?offset=1", "Runs 2–7 of 7, newest first", "/", "", ids[1:]},
		{"/?offset=20", "None of the 7 runs here", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, page := f.request("GET", tt.path, "", bearer)
			if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="count">`+tt.count) {
				t.Fatalf("GET %s = %d, lacks %q\n%s", tt.path, resp.StatusCode, tt.count, page)
			}
			link := func(id string) string {
				_, rest, ok := strings.Cut(page, `id="`+id+`"`)
				if !ok {
					return ""
				}
				before := page[:len(page)-len(rest)]
				i := strings.LastIndex(before, `href="`)
				href, _, _ := strings.Cut(before[i+len(`href="`):], `"`)
				return href
			}
			if got := link("newer"); got != tt.newer && !(tt.newer == "" && tt.path == "/?offset=20") {
				t.Errorf("newer: %q, want %q", got, tt.newer)
			}
			if got := link("older"); got != tt.older {
				t.Errorf("older: %q, want %q", got, tt.older)
			}
			for _, id := range ids {
				if shown := strings.Contains(page, `data-run="`+id+`"`); shown != slices.Contains(tt.shown, id) {
					t.Errorf("run %s shown: %v", id, shown)
				}
			}
		})
	}
	if _, page := f.request("GET", "/?offset=20", "", bearer); !strings.Contains(page, `href="/" id="newer"`) {
		t.Errorf("a page past the end does not lead back to the first")
	}
}

// counting is the store, counting what the server asks of it.
type counting struct {
	*store.Store
	mu      sync.Mutex
	perRun  []string // calls about one run
	lists   int
	maxRows int // the most runs one list call returned
}

func (c *counting) note(perRun string, rows int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if perRun != "" {
		c.perRun = append(c.perRun, perRun)
		return
	}
	c.lists++
	c.maxRows = max(c.maxRows, rows)
}

func (c *counting) ListRuns(ctx context.Context, f store.Filter) ([]store.Run, error) {
	runs, err := c.Store.ListRuns(ctx, f)
	c.note("", len(runs))
	return runs, err
}

func (c *counting) ListHeads(ctx context.Context, f store.Filter) ([]store.Head, error) {
	heads, err := c.Store.ListHeads(ctx, f)
	c.note("", len(heads))
	return heads, err
}

func (c *counting) CountRuns(ctx context.Context, f store.Filter) (int, error) {
	c.note("", 0)
	return c.Store.CountRuns(ctx, f)
}

func (c *counting) GetRun(ctx context.Context, id string) (store.Run, error) {
	c.note("GetRun", 0)
	return c.Store.GetRun(ctx, id)
}

func (c *counting) FindRun(ctx context.Context, ref string) (store.Run, error) {
	c.note("FindRun", 0)
	return c.Store.FindRun(ctx, ref)
}

func (c *counting) Spent(ctx context.Context, id string) (float64, error) {
	c.note("Spent", 0)
	return c.Store.Spent(ctx, id)
}

func (c *counting) Events(ctx context.Context, id string, after int64, limit int) ([]event.Event, error) {
	c.note("Events", 0)
	return c.Store.Events(ctx, id, after, limit)
}

func (c *counting) PostedAnswer(r store.Run) (human.Answer, bool, error) {
	c.note("PostedAnswer", 0)
	return c.Store.PostedAnswer(r)
}

// The list of runs costs a page of rows and a few queries, whatever the
// number of runs and of waiting ones: no query per run shown, no list
// read whole.
func TestTheListCostsAPageOfRows(t *testing.T) {
	t.Parallel()
	type cost struct {
		lists, maxRows int
		perRun         []string
	}
	measure := func(n, waiting int, path string) cost {
		c := &counting{Store: bigStore(t, n, waiting)}
		srv, err := web.New(web.Options{Runs: reader{c}, Token: testToken, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		h, err := srv.Handler("127.0.0.1:7077", "127.0.0.1:7077")
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "http://127.0.0.1:7077"+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d\n%s", path, rec.Code, rec.Body)
		}
		return cost{c.lists, c.maxRows, c.perRun}
	}
	for _, path := range []string{"/?limit=10", "/api/runs?limit=10", "/?limit=10&offset=10"} {
		small, big := measure(12, 2, path), measure(60, 30, path)
		if len(small.perRun) > 0 || len(big.perRun) > 0 {
			t.Errorf("GET %s asks about runs one by one: %v", path, big.perRun)
		}
		if small.lists != big.lists || big.maxRows > 10 {
			t.Errorf("GET %s: %d list queries over 12 runs, %d over 60 runs returning up to %d rows (the page has 10)",
				path, small.lists, big.lists, big.maxRows)
		}
	}
}
