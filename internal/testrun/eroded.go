package testrun

import (
	"fmt"
	"strings"
)

// Erosion is a test that passed before a change and did not pass as
// itself in a later run of the change: it is missing there (removed, or
// renamed: a renamed test is the old name missing and a new one found),
// or it was skipped. The tests are the referee's evidence, so a change
// that loses one needs a human's typed approval.
type Erosion struct {
	Test string `json:"test"`
	// Missing and Skipped name the runs ("red", "green") where the test
	// was missing or skipped.
	Missing []string `json:"missing,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
}

func (e Erosion) String() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing at "+strings.Join(e.Missing, " and "))
	}
	if len(e.Skipped) > 0 {
		parts = append(parts, "skipped at "+strings.Join(e.Skipped, " and "))
	}
	return fmt.Sprintf("%s: passed before the change, %s", e.Test, strings.Join(parts, ", "))
}

// Phase is a later run of the tests, named as the human knows it.
type Phase struct {
	Name  string // "red", "green"
	Tests *Tests // the run's tests; nil when it named none
}

// Eroded lists the tests that passed at the baseline and are missing or
// skipped in a later phase, in the baseline's order. A phase that named no
// tests (the runner reports no names, or the run did not take place) says
// nothing; neither does a name the phase may have left uncounted (its
// names were capped: Tests.Omitted), so a large project is never
// accused of losing a test azero did not keep the name of.
func Eroded(baseline *Tests, later ...Phase) []Erosion {
	if baseline.Empty() {
		return nil
	}
	var out []Erosion
	for _, name := range baseline.Passed {
		e := Erosion{Test: name}
		for _, p := range later {
			if p.Tests.Empty() {
				continue
			}
			switch p.Tests.Status(name) {
			case "":
				if p.Tests.Omitted == 0 {
					e.Missing = append(e.Missing, p.Name)
				}
			case "skipped":
				e.Skipped = append(e.Skipped, p.Name)
			}
		}
		if len(e.Missing)+len(e.Skipped) > 0 {
			out = append(out, e)
		}
	}
	return out
}
