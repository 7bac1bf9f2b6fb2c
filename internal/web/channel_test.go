package web_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// The page's form and the JSON API are two channels: each answer is
// recorded, sealed and shown with the one it came through, and a client
// cannot name its channel.
func TestThePageAndTheAPIAreTwoChannels(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	byForm, byAPI := f.waitingRun(state{}), f.waitingRun(state{})
	form := map[string]string{"Cookie": "azero_" + portOf(t, f) + "=" + testToken, "Content-Type": "application/x-www-form-urlencoded"}
	values := url.Values{"gate": {"review"}, "answer": {"approve"}, "csrf": {csrfOf(t, f, byForm)}}
	if resp, body := f.request("POST", "/runs/"+byForm+"/answer", values.Encode(), form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the form: %d\n%s", resp.StatusCode, body)
	}
	if code, doc := f.api("POST", "/api/runs/"+byAPI+"/answer", `{"gate":"review","answer":"approve","channel":"web"}`); code != http.StatusBadRequest {
		t.Errorf("an API call naming its channel: %d %v", code, doc)
	}
	if code, doc := f.api("POST", "/api/runs/"+byAPI+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	want := map[string]string{byForm: human.ChannelWeb, byAPI: human.ChannelAPI}
	for id, channel := range want {
		f.waitsAt(id, "edit")
		_, page := f.request("GET", "/runs/"+id, "", bearer)
		if !strings.Contains(page, "review answered APPROVED on the "+channel+" channel by 127.0.0.1:") {
			t.Errorf("the page of run %s does not say the %s channel answered", id, channel)
		}
	}
	for _, name := range []string{"gate_decision", "web_answer"} {
		recs := f.auditRecords(name)
		if len(recs) != 2 {
			t.Fatalf("%d %s records", len(recs), name)
		}
		for _, r := range recs {
			if id, _ := r["run_id"].(string); r["channel"] != want[id] {
				t.Errorf("%s of run %s: channel %v, want %s", name, id, r["channel"], want[id])
			}
		}
	}
}

// posted is the answer posted for run id and not yet taken, decoded.
func posted(t *testing.T, f *fixture, id string) human.Answer {
	t.Helper()
	var a human.Answer
	if err := json.Unmarshal(f.run(id).Answer, &a); err != nil {
		t.Fatalf("run %s has no answer posted: %v", id, err)
	}
	return a
}

// An answer's channel is sealed with it: changed in the store, the answer
// is not azero's any more.
func TestTheChannelIsSealed(t *testing.T) {
	t.Parallel()
	// Nothing continues the runs: the answers stay in the store.
	f := newFixtureConfig(t, fixtureConfig{still: true})
	id := f.waitingRun(state{})
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	r := f.run(id)
	q := question(t, r)
	if a, err := f.st.CheckAnswer(id, q, r.Answer); err != nil || a.Channel != human.ChannelAPI {
		t.Fatalf("the answer posted: %+v, %v", a, err)
	}
	a := posted(t, f, id)
	a.Channel = human.ChannelWeb
	raw, _ := json.Marshal(a)
	if _, err := f.st.CheckAnswer(id, q, raw); !errors.Is(err, store.ErrForged) {
		t.Errorf("an answer whose channel was changed verifies: %v", err)
	}
}

// An answer is stamped by the server's clock when taken, and never before
// its question was asked, even when the clock that asked runs ahead.
func TestAnAnswerIsNeverBeforeItsQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		clock  time.Time
		asking bool // the answer is stamped when the question was asked
	}{
		{"the server's clock behind the asker's", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"the server's clock after the question", time.Date(2100, 1, 1, 12, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureConfig(t, fixtureConfig{still: true, now: func() time.Time { return tt.clock }})
			id := f.waitingRun(state{})
			asked := question(t, f.run(id)).AskedAt
			if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
				t.Fatal(code, doc)
			}
			want := tt.clock
			if tt.asking {
				want = asked
			}
			if at := posted(t, f, id).At; !at.Equal(want) || at.Before(asked) {
				t.Errorf("answered at %v; asked at %v, the server's clock %v", at, asked, tt.clock)
			}
			recs := f.auditRecords("web_answer")
			if len(recs) != 1 {
				t.Fatalf("%d web_answer records", len(recs))
			}
			askedAt, err1 := time.Parse(time.RFC3339Nano, recs[0]["asked_at"].(string))
			answeredAt, err2 := time.Parse(time.RFC3339Nano, recs[0]["answered_at"].(string))
			if err1 != nil || err2 != nil || !askedAt.Equal(asked) || !answeredAt.Equal(want) {
				t.Errorf("web_answer %v", recs[0])
			}
		})
	}
}
