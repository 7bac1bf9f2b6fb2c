package web_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/testenv"
)

// An answer written into the store's answer column by anything but azero
// (here: with SQL, as code that reached the state directory would) is not
// an answer: the page and the API never show it as one, the form stays,
// and an answer from the page is taken over it, the forged one recorded
// as answer_forged.
func TestForgedAnswerIsNotShownAndDoesNotBlock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	q := question(t, f.run(id))
	forged, _ := json.Marshal(human.Answer{Gate: "review", QuestionID: q.ID, Key: "abort", Channel: human.ChannelTerminal, By: "terminal of root@prod"})
	db, err := sql.Open("sqlite", f.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET answer = ? WHERE id = ?`, string(forged), id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	resp, page := f.request("GET", "/runs/"+id, "", bearer)
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "answered on the terminal channel") || !strings.Contains(page, `name="answer"`) {
		t.Fatalf("the run's page (%d) shows the forged answer or no form:\n%s", resp.StatusCode, page)
	}
	code, doc := f.api("GET", "/api/gates", "")
	gates, _ := doc["gates"].([]any)
	if code != http.StatusOK || len(gates) != 1 || gates[0].(map[string]any)["answered"] != nil {
		t.Fatalf("GET /api/gates = %d %v: want the gate, not answered", code, doc)
	}

	code, doc = f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`)
	if code != http.StatusOK || doc["decision"] != "APPROVED" {
		t.Fatalf("the page's approval over a forged answer: %d %v", code, doc)
	}
	f.waitsAt(id, "edit")
	recs := f.auditRecords("answer_forged")
	if len(recs) != 1 || recs[0]["run_id"] != id || recs[0]["gate"] != "review" || recs[0]["claimed_channel"] != human.ChannelTerminal ||
		recs[0]["claimed_by"] != "terminal of root@prod" {
		t.Errorf("answer_forged records = %v", recs)
	}
	decisions := f.auditRecords("gate_decision")
	if len(decisions) != 1 || decisions[0]["decision"] != "APPROVED" || decisions[0]["channel"] != human.ChannelAPI {
		t.Errorf("want the API's approval decided, and nothing else: %v", decisions)
	}
}

// A run whose stored row was rewritten with SQL (moved past its gate) is
// listed, marked as not verified, but nothing acts on it: its page and
// its API say the row was changed outside azero, an answer posted for it
// is refused (409) and never continues it, and run_forged is recorded.
func TestForgedRunRowIsListedButNotActedOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	db, err := sql.Open("sqlite", f.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET node = 'edit', question = replace(question, 'review', 'edit') WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	resp, page := f.request("GET", "/", "", bearer)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, id) || !strings.Contains(page, "not verified") {
		t.Errorf("the runs page (%d) does not list the run marked:\n%s", resp.StatusCode, page)
	}
	code, doc := f.api("GET", "/api/runs", "")
	runs, _ := doc["runs"].([]any)
	if code != http.StatusOK || len(runs) != 1 || !strings.Contains(fmt.Sprint(runs[0].(map[string]any)["unverified"]), "was changed outside azero") {
		t.Errorf("GET /api/runs = %d %v: want the run, unverified", code, doc)
	}
	resp, page = f.request("GET", "/runs/"+id, "", bearer)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(page, "was changed outside azero") {
		t.Errorf("the run's page: %d\n%s", resp.StatusCode, page)
	}
	code, doc = f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"edit","answer":"send"}`)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(doc["error"]), "azero will not act on it") {
		t.Errorf("an answer for the forged run: %d %v, want 409 and why", code, doc)
	}
	f.mu.Lock()
	continued := len(f.continued)
	f.mu.Unlock()
	if continued != 0 {
		t.Errorf("the forged run was continued")
	}
	if recs := f.auditRecords("run_forged"); len(recs) != 1 || recs[0]["run_id"] != id || recs[0]["by"] != "serve" {
		t.Errorf("run_forged records = %v", recs)
	}
	if recs := f.auditRecords("gate_decision"); len(recs) != 0 {
		t.Errorf("decisions: %v", recs)
	}
}

// A list page takes its fingerprint from the rows it shows, and its
// stream from the store: with a forged run among them (listed, marked),
// the two agree on the same store, or the page would be told of a change
// at once, and again after every reload.
func TestAListPageAndItsStreamAgreeOverAForgedRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	forged := f.waitingRun(state{})
	f.waitingRun(state{})
	db, err := sql.Open("sqlite", f.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET node = 'edit' WHERE id = ?`, forged); err != nil {
		t.Fatal(err)
	}
	db.Close()
	stream := regexp.MustCompile(`data-stream="/events\?since=([0-9a-f]+)((?:&amp;[^"]*)?)"`)
	for _, path := range []string{"/", "/?limit=1", "/?limit=1&offset=1", "/?status=waiting", "/?status=interrupted", "/gates"} {
		_, page := f.request("GET", path, "", bearer)
		m := stream.FindStringSubmatch(page)
		marked := path == "/" || path == "/?status=waiting" || path == "/?limit=1&offset=1"
		if m == nil || marked && !strings.Contains(page, "not verified") {
			t.Fatalf("GET %s: stream %q, or the forged run not shown marked:\n%s", path, m, page)
		}
		// A stream that follows from no fingerprint says at once what the
		// list is now.
		ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
		req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/events?since=none"+html.UnescapeString(m[2]), nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		var now string
		for changed := false; now == "" && sc.Scan(); {
			switch line := sc.Text(); {
			case line == "event: changed":
				changed = true
			case changed && strings.HasPrefix(line, "data: "):
				now = strings.TrimPrefix(line, "data: ")
			}
		}
		resp.Body.Close()
		cancel()
		if now != m[1] {
			t.Errorf("GET %s follows from %s; its stream says the list is %q", path, m[1], now)
		}
	}
}
