package testrun

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxTestNames bounds the names a Result keeps of its tests (all outcomes
// together): a Result is checkpointed with its run after every step, so
// what it carries must stay small whatever the project's size. The rest
// are counted (Tests.Omitted).
const MaxTestNames = 5000

// maxTestName bounds one name kept.
const maxTestName = 300

// Tests are the names of a run's tests by outcome, as the runner's report
// names them ("pkg.TestAdd/neg", "tests/test_calc.py::test_add",
// "calc.test.js > adds"), each list sorted and without repeats. A test
// reported more than once (go test -count=2) is kept once, with its worst
// outcome. They are what tells a test that passed at the baseline from
// one that is missing later (Eroded).
//
// In JSON each list is front-coded: every name after the first is written
// as the number of bytes it shares with the one before it, a colon, and
// the rest ("0:example.com/calc.TestAdd", "24:Sub"), since a project's
// names share long prefixes (a package path, a file).
type Tests struct {
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	Errored []string `json:"errored,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	// Omitted counts the tests whose names were not kept (beyond
	// MaxTestNames, or reported without a name).
	Omitted int `json:"omitted,omitempty"`
}

// Empty reports whether no test was named.
func (t *Tests) Empty() bool {
	return t == nil || len(t.Passed)+len(t.Failed)+len(t.Errored)+len(t.Skipped) == 0
}

// Status returns what happened to the test called name in this run:
// "passed", "failed", "errored", "skipped", or "" when it did not run
// (or its name was not kept).
func (t *Tests) Status(name string) string {
	if t == nil {
		return ""
	}
	for _, l := range []struct {
		names  []string
		status string
	}{{t.Passed, "passed"}, {t.Failed, "failed"}, {t.Errored, "errored"}, {t.Skipped, "skipped"}} {
		if _, ok := slices.BinarySearch(l.names, name); ok {
			return l.status
		}
	}
	return ""
}

// names collects a run's test names as the tally records them.
type names struct {
	by      map[string]status
	omitted int
}

func (n *names) add(name string, st status) {
	if name == "" {
		n.omitted++
		return
	}
	name = clip(name, maxTestName)
	if n.by == nil {
		n.by = map[string]status{}
	}
	if prev, ok := n.by[name]; ok {
		// The worst outcome stands: failed or errored over skipped over passed.
		if rank(st) > rank(prev) {
			n.by[name] = st
		}
		return
	}
	if len(n.by) >= MaxTestNames {
		n.omitted++
		return
	}
	n.by[name] = st
}

func rank(st status) int {
	switch st {
	case passed:
		return 0
	case skipped:
		return 1
	case failed:
		return 2
	}
	return 3
}

// tests returns the collected names, nil when there are none.
func (n *names) tests() *Tests {
	if len(n.by) == 0 && n.omitted == 0 {
		return nil
	}
	t := &Tests{Omitted: n.omitted}
	for name, st := range n.by {
		switch st {
		case passed:
			t.Passed = append(t.Passed, name)
		case failed:
			t.Failed = append(t.Failed, name)
		case errored:
			t.Errored = append(t.Errored, name)
		case skipped:
			t.Skipped = append(t.Skipped, name)
		}
	}
	for _, l := range [][]string{t.Passed, t.Failed, t.Errored, t.Skipped} {
		slices.Sort(l)
	}
	return t
}

// testsJSON is Tests as JSON holds it: the lists front-coded.
type testsJSON struct {
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	Errored []string `json:"errored,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	Omitted int      `json:"omitted,omitempty"`
}

// MarshalJSON writes the lists front-coded (see Tests).
func (t Tests) MarshalJSON() ([]byte, error) {
	return json.Marshal(testsJSON{Passed: frontCode(t.Passed), Failed: frontCode(t.Failed), Errored: frontCode(t.Errored),
		Skipped: frontCode(t.Skipped), Omitted: t.Omitted})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *Tests) UnmarshalJSON(data []byte) error {
	var j testsJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var out Tests
	for _, l := range []struct {
		coded []string
		into  *[]string
	}{{j.Passed, &out.Passed}, {j.Failed, &out.Failed}, {j.Errored, &out.Errored}, {j.Skipped, &out.Skipped}} {
		names, err := frontDecode(l.coded)
		if err != nil {
			return fmt.Errorf("read test names: %w", err)
		}
		*l.into = names
	}
	out.Omitted = j.Omitted
	*t = out
	return nil
}

// frontCode writes each name as the bytes it shares with the one before
// it (cut on a character boundary, so each part stays valid text) and the
// rest.
func frontCode(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	prev := ""
	for i, name := range names {
		n := 0
		for n < len(prev) && n < len(name) && prev[n] == name[n] {
			n++
		}
		for n > 0 && n < len(name) && !utf8.RuneStart(name[n]) {
			n--
		}
		out[i] = strconv.Itoa(n) + ":" + name[n:]
		prev = name
	}
	return out
}

// frontDecode reads frontCode's lists.
func frontDecode(coded []string) ([]string, error) {
	if len(coded) == 0 {
		return nil, nil
	}
	out := make([]string, len(coded))
	prev := ""
	for i, c := range coded {
		num, rest, ok := strings.Cut(c, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || !digits(num) || (len(num) > 1 && num[0] == '0') || n > len(prev) {
			return nil, fmt.Errorf("name %d (%q) is not front-coded", i+1, c)
		}
		out[i] = prev[:n] + rest
		prev = out[i]
	}
	return out, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
