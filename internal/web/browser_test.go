package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/web/webtest"
)

// A person opens the URL with the token, finds the waiting run, reads its
// diff, types a partial word (refused: the run keeps waiting), types
// approve, then edits the draft at the next gate and sends it. The page
// keeps the token out of scripts' reach, and follows the run live.
func TestBrowserAnswersGates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{Draft: "# Draft\n"})
	ctx := webtest.Browser(t)

	webtest.Do(t, ctx, chromedp.Navigate(f.http.URL+"/?token="+testToken), chromedp.WaitVisible(chromedp.CSS(`tr[data-run="`+id+`"]`)))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if strings.Contains(loc, "token") {
		t.Errorf("the address bar still shows the token: %s", loc)
	}
	if cookie, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie")); cookie != "" {
		t.Errorf("scripts can read the cookie %q", cookie)
	}

	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS(`tr[data-run="`+id+`"] a`)), chromedp.WaitVisible(chromedp.CSS("#question input[name=answer]")))
	report := webtest.Text(t, ctx, "#question .report")
	for _, w := range []string{"!! WARNING: MODIFIED: textkit/slug.go", "diff --git a/textkit/slug.go", "+return slugify(s) // <script>alert(1)</script>"} {
		if !strings.Contains(report, w) {
			t.Errorf("the question's report lacks %q:\n%s", w, report)
		}
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll('#question button').length")); n != 1 {
		t.Errorf("%d buttons in the form, want one Answer button", n)
	}

	// A partial word: refused on the page, and the run keeps waiting.
	webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#question input[name=answer]"), "approv"),
		chromedp.Submit(chromedp.CSS("#question input[name=answer]")),
		chromedp.WaitVisible(chromedp.CSS("#answer-error")))
	if msg := webtest.Text(t, ctx, "#answer-error"); !strings.Contains(msg, `"approv" is not one of the answers`) {
		t.Errorf("error shown: %q", msg)
	}
	if r := f.run(id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("after a partial word the run is %s with answer %s", r.Status, r.Answer)
	}

	// The word in full.
	webtest.Do(t, ctx, chromedp.Clear(chromedp.CSS("#question input[name=answer]")),
		chromedp.SendKeys(chromedp.CSS("#question input[name=answer]"), "approve"),
		chromedp.Submit(chromedp.CSS("#question input[name=answer]")))
	// The page shows the next gate when the run reaches it (the note that
	// the answer was taken may come and go before).
	webtest.WaitFor(t, ctx, `document.querySelector('#question[data-gate="edit"] textarea[name="file:draft.md"]') !== null`)
	webtest.Do(t, ctx, chromedp.Clear(chromedp.CSS(`textarea[name="file:draft.md"]`)),
		chromedp.SendKeys(chromedp.CSS(`textarea[name="file:draft.md"]`), "# Better draft\n"),
		chromedp.Click(chromedp.CSS(`input[type=radio][value="S"]`)),
		chromedp.Submit(chromedp.CSS(`textarea[name="file:draft.md"]`)))
	r := f.waitFor(id, "finished", func(r store.Run) bool { return r.Status == store.StatusDone })
	var s state
	_ = json.Unmarshal(r.State, &s)
	if s.Draft != "# Better draft\n" || s.Decision != "S" {
		t.Errorf("state after the page's answers: %+v", s)
	}
	decisions := f.auditRecords("gate_decision")
	if len(decisions) != 2 {
		t.Fatalf("%d decisions audited", len(decisions))
	}
	for _, d := range decisions {
		by, _ := d["by"].(string)
		if d["channel"] != "web" || !strings.Contains(by, "127.0.0.1:") || !strings.Contains(by, "HeadlessChrome") {
			t.Errorf("decision %v", d)
		}
	}
	webtest.WaitFor(t, ctx, `document.querySelector('#run-status').dataset.status === 'done'`)
}

// A run's page follows the run as it happens: an answer given elsewhere
// appears in its events, and the page shows the next question.
func TestBrowserFollowsARunLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	ctx := webtest.Browser(t)
	webtest.Do(t, ctx, chromedp.Navigate(f.http.URL+"/runs/"+id+"?token="+testToken), chromedp.WaitVisible(chromedp.CSS(`#question[data-gate="review"]`)))
	webtest.WaitFor(t, ctx, `!document.getElementById('live').hidden`)
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	webtest.WaitFor(t, ctx, `document.querySelector('#question[data-gate="edit"]') !== null`)
	webtest.WaitFor(t, ctx, `document.getElementById('events').innerText.includes('review answered APPROVED on the api channel by 127.0.0.1:')`)

	// What a person typed is never thrown away: with text in the form, a
	// change is announced instead of reloading.
	webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS(`textarea[name="feedback"]`), "half-typed feedback"))
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"edit","answer":"S"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	webtest.WaitFor(t, ctx, `!document.getElementById('notice').hidden`)
	if v, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`textarea[name="feedback"]`))); v != "half-typed feedback" {
		t.Errorf("the feedback field holds %q", v)
	}
}

// The forms offer exactly what the gate allows: a word question has one
// text field for the word and one button that carries no answer of its
// own (clicked with the field empty, it sends nothing); a menu offers its
// options, each once, with the feedback and the confirmation word as
// typed fields.
func TestBrowserFormsOfferTheGatesAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{Draft: "# Draft\n", Verdict: "BLOCK"})
	ctx := webtest.Browser(t)
	webtest.Do(t, ctx, chromedp.Navigate(f.http.URL+"/runs/"+id+"?token="+testToken), chromedp.WaitVisible(chromedp.CSS(`#question[data-gate="review"]`)))

	answers := `Array.from(document.querySelectorAll('#question form [name=answer]')).map(e => e.tagName + ':' + e.type + ':' + e.value).join(' ')`
	buttons := `Array.from(document.querySelectorAll('#question form button, #question form input[type=submit], #question form input[type=image], #question form input[type=button]')).map(b => b.type + ':' + b.name + '=' + b.value).join(' ')`
	named := `Array.from(document.querySelectorAll('#question form [name]')).map(e => e.name).sort().join(' ')`
	check := func(what, expression, want string) {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](expression))
		if err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", what, got, err, want)
		}
	}
	check("the word question's answer fields", answers, "INPUT:text:")
	check("the word question's buttons", buttons, "submit:=")
	check("the word question's fields", named, "answer csrf feedback gate question_id")

	// The button alone sends nothing: the word must be typed.
	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS(`#question button`)))
	check("the empty field after a click", `document.querySelector('#question input[name=answer]').validity.valueMissing ? 'missing' : 'sent'`, "missing")
	webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#question input[name=answer]"), "abor"),
		chromedp.Submit(chromedp.CSS("#question input[name=answer]")), chromedp.WaitVisible(chromedp.CSS("#answer-error")))
	if r := f.run(id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("run %s with answer %s", r.Status, r.Answer)
	}
	if n := len(f.auditRecords("web_answer_refused")); n != 1 {
		t.Errorf("%d refusals audited, want 1 (the partial word; the button alone sends nothing)", n)
	}

	// The editor question's menu: its options, no more. The page is left
	// first: it would show the run anew when the answer moves it, and a
	// reload of its own racing the navigation below could cancel that.
	webtest.Do(t, ctx, chromedp.Navigate("about:blank"))
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	f.waitsAt(id, "edit")
	webtest.Do(t, ctx, chromedp.Navigate(f.http.URL+"/runs/"+id), chromedp.WaitVisible(chromedp.CSS(`#question[data-gate="edit"]`)))
	check("the menu's answers", answers, "INPUT:radio:S INPUT:radio:R INPUT:radio:A")
	check("the menu's buttons", buttons, "submit:=")
	check("the menu's fields", named, "answer answer answer confirm csrf feedback file:draft.md gate question_id")
	check("the menu's labels", `Array.from(document.querySelectorAll('#question fieldset.menu label')).map(l => l.innerText.trim()).join(' | ')`,
		"[S]end | [R]evise (with feedback) | [A]pprove (confirmed by typing override)")
}

// The URL with the token opened from a link on another site (a chat
// message, a notes page) shows the page too: the browser would not send a
// SameSite=Strict cookie along a redirect started by another site, so the
// server sends it on from a page of its own.
func TestBrowserOpensTheURLFromAnotherSite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	target := f.http.URL + "/runs/" + id + "?token=" + testToken
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><a id="open" href="` + target + `">the run</a>`))
	}))
	t.Cleanup(other.Close)
	// localhost and 127.0.0.1 are different sites.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	ctx := webtest.Browser(t)
	webtest.Do(t, ctx, chromedp.Navigate(elsewhere), chromedp.WaitVisible(chromedp.CSS("#open")))
	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS("#open")))
	webtest.WaitFor(t, ctx, `document.querySelector('#question[data-gate="review"]') !== null`)
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if loc != f.http.URL+"/runs/"+id {
		t.Errorf("the page is at %s", loc)
	}
	if cookie, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie")); cookie != "" {
		t.Errorf("scripts can read the cookie %q", cookie)
	}
}

// A person pages through the runs, sees what a waiting run asks, and
// reads its question worded as at the terminal, with times in a zone
// named.
func TestBrowserPagesThroughRuns(t *testing.T) {
	t.Parallel()
	f, ids := pagedFixture(t, nil)
	ctx := webtest.Browser(t)
	webtest.Do(t, ctx, chromedp.Navigate(f.http.URL+"/?limit=3&token="+testToken), chromedp.WaitVisible(chromedp.CSS("#count")))
	if got := webtest.Text(t, ctx, "#count"); got != "Runs 1–3 of 7, newest first" {
		t.Errorf("the first page says %q", got)
	}
	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS("#older")))
	webtest.WaitFor(t, ctx, `document.querySelector('#count') !== null && document.querySelector('#count').innerText === 'Runs 4–6 of 7, newest first'`)
	// The filter keeps the page's size.
	webtest.Do(t, ctx, chromedp.SetValue(chromedp.CSS(`select[name=status]`), "waiting"), chromedp.Submit(chromedp.CSS(`select[name=status]`)))
	webtest.WaitFor(t, ctx, `document.querySelector('#count') !== null && document.querySelector('#count').innerText === 'Runs 1–3 of 4, newest first'`)
	asks := webtest.Text(t, ctx, `tr[data-run="`+ids[3]+`"] .asks`)
	if asks != "asks: Diff review · Merge this change?" {
		t.Errorf("the list says %q", asks)
	}
	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS(`tr[data-run="`+ids[3]+`"] a`)), chromedp.WaitVisible(chromedp.CSS("#question .words")))
	if words := webtest.Text(t, ctx, "#question .words"); words != "Type approve to proceed, revise to send it back or abort to stop" {
		t.Errorf("the form says %q", words)
	}
	if created := webtest.Text(t, ctx, "dl.facts time"); !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([A-Z]{2,5}|[+-]\d{4})$`).MatchString(created) {
		t.Errorf("the run was created at %q: no zone", created)
	}
}
