package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web/webtest"
	designwf "github.com/azero-dev/azero/internal/workflow/design"
)

// browserNote is what the person adds to the draft on the page.
const browserNote = "Edited on the page: Multiply(0, n) is 0."

// TestDesignAnsweredInABrowser: a design run waiting without a terminal is
// answered on the page of a real azero serve in a real browser: the draft
// gate shows the draft as a text area, as the editor would, with the
// menu's options; the person edits it there and sends it; the reviewer is
// given the edited design; the verdict gate shows the verdict and is
// approved on the page; the edited design is what is committed.
func TestDesignAnsweredInABrowser(t *testing.T) {
	t.Parallel()
	w := newDesWorld(t, "")
	res := w.runPiped(nil, "design", "--issue", "1", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	id := desDoc(t, res.stdout).RunID
	srv := startServeWith(t, w.state, w.extras())
	waitAt(t, w.state, id, designwf.NodeEditDraft, srv)

	ctx := webtest.Browser(t)
	eval := func(expression string) string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](expression))
		if err != nil {
			t.Fatalf("%s: %v", expression, err)
		}
		return got
	}
	files := `Array.from(document.querySelectorAll('#question textarea[name^="file:"]')).map(e => e.name).join(' ')`
	options := `Array.from(document.querySelectorAll('#question input[type=radio][name=answer]')).map(e => e.value).join(' ')`

	webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/runs/"+id+"?token="+srv.token),
		chromedp.WaitVisible(chromedp.CSS(`#question[data-gate="`+designwf.NodeEditDraft+`"]`)))
	draftArea := `#question textarea[name="file:draft.md"]`
	if got := eval(files); got != "file:draft.md" {
		t.Fatalf("the draft gate's text areas: %q, want the draft", got)
	}
	if got := eval(options); got != "S R M" {
		t.Errorf("the draft gate's options: %q, want send, revise, manual", got)
	}
	draft, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(draftArea)))
	if err != nil || !strings.Contains(draft, "Files Changed") || !strings.Contains(draft, "`calc.go`") {
		t.Fatalf("the draft on the page (%v):\n%s", err, draft)
	}
	if draft != w.read("docs/audit/active/design-001-multiply/002-draft.md") {
		t.Errorf("the page's draft is not the trail's:\n%s", draft)
	}
	// The person types at the end of the draft, as in an editor.
	eval(`(() => { const e = document.querySelector('` + draftArea + `'); e.focus(); e.setSelectionRange(e.value.length, e.value.length); return '' })()`)
	webtest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS(draftArea), "\n"+browserNote+"\n"),
		chromedp.Click(chromedp.CSS(`#question input[type=radio][value="S"]`)),
		chromedp.Submit(chromedp.CSS(draftArea)))

	waitAt(t, w.state, id, designwf.NodeEditVerdict, srv)
	webtest.Do(t, ctx, chromedp.Navigate(srv.base+"/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#question[data-gate="`+designwf.NodeEditVerdict+`"]`)))
	areas := strings.Fields(eval(files))
	if len(areas) == 0 || !slices.ContainsFunc(areas, func(n string) bool { return strings.HasSuffix(n, "verdict.md") }) {
		t.Fatalf("the verdict gate's text areas: %v, want the verdict's", areas)
	}
	if got := eval(`document.getElementById('question').innerText + Array.from(document.querySelectorAll('#question textarea')).map(e => e.value).join('\n')`); !strings.Contains(got, "APPROVED") || !strings.Contains(got, browserNote) {
		t.Errorf("the verdict gate does not show the verdict and the edited design:\n%s", got)
	}
	if got := eval(options); got != "A R M" {
		t.Errorf("the verdict gate's options: %q, want approve, revise, manual", got)
	}
	webtest.Do(t, ctx, chromedp.Click(chromedp.CSS(`#question input[type=radio][value="A"]`)),
		chromedp.Submit(chromedp.CSS(`#question input[type=radio][value="A"]`)))

	deadline := time.Now().Add(testenv.Patience)
	for r := runByID(t, w.state, id); r.Status != store.StatusDone; r = runByID(t, w.state, id) {
		if r.Status.Finished() || time.Now().After(deadline) {
			t.Fatalf("the run is %s at %s (%s)\n%s", r.Status, r.Node, r.Error, srv.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	webtest.WaitFor(t, ctx, `document.querySelector('#run-status').dataset.status === 'done'`)

	if got := w.read("docs/lld/001-multiply.md"); !strings.Contains(got, browserNote) {
		t.Errorf("the committed design lacks the page's edit:\n%s", got)
	}
	if got := w.git("show", "HEAD:docs/lld/001-multiply.md"); !strings.Contains(got, browserNote) {
		t.Errorf("the design's commit lacks the page's edit:\n%s", got)
	}
	if got := w.lineage(id, "prompt-design-review.md", 1); !strings.Contains(got, browserNote) {
		t.Errorf("the reviewer was not given the design as edited on the page:\n%s", got)
	}
	var seen []string
	for _, r := range w.auditEvents("gate_decision") {
		if r["run_id"] == id {
			by, _ := r["by"].(string)
			if r["channel"] != "web" || !strings.Contains(by, "HeadlessChrome") {
				t.Errorf("decision %v: want it from the page", r)
			}
			seen = append(seen, r["gate"].(string))
		}
	}
	if !slices.Equal(seen, []string{designwf.NodeEditDraft, designwf.NodeEditVerdict}) {
		t.Errorf("gate decisions %v, want the draft's and the verdict's", seen)
	}
}
