package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// DefaultLimit is how many runs a list shows unless asked for another
// number: as many as `azero runs` prints.
const DefaultLimit = 50

// headLister is a Source that lists what a list shows of runs itself,
// reading a page of runs in one query (the store). Other sources are
// listed through ListRuns.
type headLister interface {
	ListHeads(ctx context.Context, f store.Filter) ([]store.Head, error)
	CountRuns(ctx context.Context, f store.Filter) (int, error)
}

// listQuery is what a list shows: the filter of `azero runs` and the
// place in the list.
type listQuery struct {
	rundoc.Filter
	// Offset is how many of the runs selected, newest first, come before
	// the first shown.
	Offset int
}

// queryOf reads a list's query: the filter of `azero runs` with its
// default limit, and the offset.
func queryOf(r *http.Request) (listQuery, error) {
	q := r.URL.Query()
	lq := listQuery{Filter: rundoc.Filter{Workflow: q.Get("workflow"), Status: q.Get("status"), Limit: DefaultLimit}}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return lq, refuse(http.StatusBadRequest, "limit must be a whole number, 0 for all (got %q)", l)
		}
		lq.Limit = n
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 {
			return lq, refuse(http.StatusBadRequest, "offset must be a whole number of runs to skip, newest first (got %q)", o)
		}
		lq.Offset = n
	}
	if err := lq.Validate(); err != nil {
		return lq, refuse(http.StatusBadRequest, "%v", err)
	}
	return lq, nil
}

// at is the query of the same list from another offset, as a URL query.
func (lq listQuery) at(offset int) string {
	v := url.Values{}
	if lq.Status != "" {
		v.Set("status", lq.Status)
	}
	if lq.Workflow != "" {
		v.Set("workflow", lq.Workflow)
	}
	if lq.Limit != DefaultLimit {
		v.Set("limit", strconv.Itoa(lq.Limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return v.Encode()
}

// listing is one page of a list: the runs shown and how many the filter
// selects in all.
type listing struct {
	Heads []store.Head
	Total int
}

// list reads the page of runs lq asks for. A page costs a page of rows,
// however many runs the store holds: the runs stored as running, told
// apart from the interrupted ones only after reading (by their driver's
// lease), are the only ones ever all read, and they are few.
func (s *Server) list(ctx context.Context, lq listQuery) (listing, error) {
	f := lq.page()
	if lq.computed() {
		all, err := s.heads(ctx, f)
		if err != nil {
			return listing{}, err
		}
		var kept []store.Head
		for _, h := range all {
			if string(rundoc.Status(s.src, h.Run)) == lq.Status {
				kept = append(kept, h)
			}
		}
		l := listing{Total: len(kept)}
		from := min(lq.Offset, len(kept))
		to := len(kept)
		if lq.Limit > 0 {
			to = min(from+lq.Limit, len(kept))
		}
		l.Heads = kept[from:to]
		return l, nil
	}
	heads, err := s.heads(ctx, f)
	if err != nil {
		return listing{}, err
	}
	f.Limit, f.Offset = 0, 0
	total, err := s.count(ctx, f)
	if err != nil {
		return listing{}, err
	}
	return listing{Heads: heads, Total: total}, nil
}

// computed reports whether lq's status is told apart after reading: a
// run stored as running is interrupted when its driver is gone.
func (lq listQuery) computed() bool {
	st := store.Status(lq.Status)
	return st == store.StatusRunning || st == store.StatusInterrupted
}

// page is the filter of the rows the store reads for lq: its page, or,
// for a status told apart after reading, every run stored as running.
func (lq listQuery) page() store.Filter {
	if lq.computed() {
		return store.Filter{Workflow: lq.Workflow, Status: store.StatusRunning}
	}
	return store.Filter{Workflow: lq.Workflow, Status: store.Status(lq.Status), Limit: lq.Limit, Offset: lq.Offset}
}

// heads lists what a list shows of the runs f selects.
func (s *Server) heads(ctx context.Context, f store.Filter) ([]store.Head, error) {
	if hl, ok := s.src.(headLister); ok {
		return hl.ListHeads(ctx, f)
	}
	runs, err := s.runsAt(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]store.Head, 0, len(runs))
	for _, r := range runs {
		h := store.Head{Run: r, Answered: len(r.Answer) > 0}
		if len(r.Question) > 0 {
			h.Asks = &store.Asking{}
			if q, err := rundoc.Question(r); err == nil {
				a := askingOf(*q)
				h.Asks = &a
			}
		}
		h.Issue, h.Slug, h.Filed = issueRef(r.State)
		h.CostUSD, _ = s.src.Spent(ctx, r.ID)
		h.State, h.Question, h.Answer = nil, nil, nil
		out = append(out, h)
	}
	return out, nil
}

// runsAt lists the runs f selects, skipping f.Offset of them here for a
// source that may not (the runs on Temporal).
func (s *Server) runsAt(ctx context.Context, f store.Filter) ([]store.Run, error) {
	if _, ok := s.src.(headLister); ok || f.Offset == 0 {
		return s.src.ListRuns(ctx, f)
	}
	skip := f.Offset
	f.Offset = 0
	if f.Limit > 0 {
		f.Limit += skip
	}
	runs, err := s.src.ListRuns(ctx, f)
	return runs[min(skip, len(runs)):], err
}

// count counts the runs f selects.
func (s *Server) count(ctx context.Context, f store.Filter) (int, error) {
	if hl, ok := s.src.(headLister); ok {
		return hl.CountRuns(ctx, f)
	}
	f.Brief = true
	runs, err := s.src.ListRuns(ctx, f)
	return len(runs), err
}

// views describes heads as `azero runs --json` does.
func (s *Server) views(heads []store.Head, now time.Time) []rundoc.View {
	out := make([]rundoc.View, len(heads))
	for i, h := range heads {
		out[i] = rundoc.ViewOf(s.src, h.Run, now)
	}
	return out
}

// pages says which of total runs a page of lq showing shown of them
// shows ("Runs 51–100 of 1000, newest first"), and gives the addresses
// of the newer and older pages around it and of the first ("" for
// none).
func pages(lq listQuery, shown, total int) (count, newer, older, newest string) {
	newest = asQuery(lq.at(0))
	switch {
	case shown == 0 && total > 0:
		return fmt.Sprintf("None of the %d runs here: they are all newer", total), "", "", newest
	case shown == total:
		count = fmt.Sprintf("%d runs", total)
		if total == 1 {
			count = "1 run"
		}
	default:
		count = fmt.Sprintf("Runs %d–%d of %d, newest first", lq.Offset+1, lq.Offset+shown, total)
	}
	if lq.Offset > 0 {
		newer = newest
		if lq.Limit > 0 {
			newer = asQuery(lq.at(max(lq.Offset-lq.Limit, 0)))
		}
	}
	if lq.Limit > 0 && lq.Offset+shown < total {
		older = asQuery(lq.at(lq.Offset + shown))
	}
	return count, newer, older, newest
}

// asQuery is the address of the runs page with query.
func asQuery(query string) string {
	if query == "" {
		return "/"
	}
	return "/?" + query
}

// issueRef reads what a run's state names of the issue it works on (as
// store.Head has it).
func issueRef(state json.RawMessage) (issue, slug string, filed int) {
	var s struct {
		Issue json.RawMessage `json:"issue"`
		Slug  string          `json:"slug"`
		Filed *struct {
			Number int `json:"number"`
		} `json:"filed"`
	}
	if json.Unmarshal(state, &s) != nil {
		return "", "", 0
	}
	var text string
	if json.Unmarshal(s.Issue, &text) != nil {
		text = string(s.Issue) // a number
	}
	if s.Filed != nil {
		filed = s.Filed.Number
	}
	return text, s.Slug, filed
}

// issueName names the issue a run works on: the filed issue, the
// design's issue number of an implementation, or a governance run's slug.
func issueName(issue, slug string, filed int) string {
	switch {
	case filed > 0:
		return "#" + strconv.Itoa(filed)
	case issue != "":
		return "#" + strings.TrimPrefix(issue, "#")
	}
	return slug
}

// issueOf names the issue the run r works on.
func issueOf(r store.Run) string { return issueName(issueRef(r.State)) }

// asks says in one line what a question asks, where its report is not
// shown (a list, a line of events): its headline, the files it flags,
// and its prompt without what points at the report ("flagged above").
func asks(a store.Asking) string {
	var parts []string
	if t := strings.TrimSpace(a.Title); t != "" {
		parts = append(parts, t)
	}
	if n := len(a.Flagged); n > 0 {
		names := a.Flagged[:min(n, 3)]
		what := fmt.Sprintf("%d flagged files: %s", n, strings.Join(names, ", "))
		if n == 1 {
			what = "1 flagged file: " + names[0]
		}
		if n > len(names) {
			what += fmt.Sprintf(" and %d more", n-len(names))
		}
		parts = append(parts, what)
	}
	if p := withoutPointers(a.Prompt); p != "" {
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "a question at " + a.Gate
	}
	return strings.Join(parts, " · ")
}

// withoutPointers is a prompt without its sentences that point at what is
// shown before it ("!! 1 file is flagged above."), on one line.
func withoutPointers(prompt string) string {
	var kept []string
	for _, sentence := range sentences(strings.Join(strings.Fields(prompt), " ")) {
		sentence = strings.TrimSpace(strings.TrimLeft(sentence, "!"))
		if sentence == "" || strings.Contains(" "+strings.ToLower(sentence)+" ", " above") {
			continue
		}
		kept = append(kept, sentence)
	}
	return strings.TrimSpace(strings.Join(kept, " "))
}

// sentences splits text after each ". ", "? " and "! ".
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(text); i++ {
		if strings.ContainsRune(".?!", rune(text[i])) && text[i+1] == ' ' {
			out = append(out, text[start:i+1])
			start = i + 2
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// askingOf is what a list shows of q.
func askingOf(q human.Question) store.Asking {
	return store.Asking{Gate: q.Gate, Title: q.Title, Prompt: q.Prompt, Flagged: review.FlaggedIn(q)}
}
