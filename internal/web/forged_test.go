package web_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
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
