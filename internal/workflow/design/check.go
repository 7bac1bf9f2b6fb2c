package design

import (
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/lld"
)

// Rules of the checks this package adds to lld.Check's.
const (
	RuleTable  = "files-changed-table" // the document has no table lld.Parse can read
	RuleSecret = contextload.RuleSecret
	RuleTests  = "lists-a-test-file" // implement writes the tests first
	RuleCode   = "lists-a-code-file"
)

// Check is the mechanical check a draft passes before any human or the
// reviewer sees it, and the committed document passes again: the Files
// Changed table read and checked against the repository at root by the
// code `azero implement` runs (lld.Parse, lld.Check: Modify and Delete
// targets exist, Add targets do not (a new directory is fine, one below
// a file is not), no invented src/, lib/ or app/, every path inside the
// repository), then what
// implement's Prepare also demands (a test file and a code file) and what
// no model may be told to write (a secret-looking path). It returns every
// problem found; none means the draft passed.
func Check(doc, root string) []Finding {
	parsed, err := lld.Parse(doc)
	if err != nil {
		return []Finding{{Rule: RuleTable, Message: err.Error()}}
	}
	var out []Finding
	if _, err := lld.Check(parsed, root); err != nil {
		var ce *lld.CheckError
		if !errors.As(err, &ce) {
			return []Finding{{Rule: RuleTable, Message: err.Error()}}
		}
		for _, p := range ce.Problems {
			out = append(out, Finding{Line: p.Line, Path: p.Path, Rule: p.Rule, Message: p.Message})
		}
	}
	tests, code := 0, 0
	for _, f := range parsed.Files {
		if pat, secret := contextload.LooksSecret(f.Path); secret {
			out = append(out, Finding{Line: f.Line, Path: f.Path, Rule: RuleSecret,
				Message: fmt.Sprintf("the path looks like it holds secrets (%s): no model writes it", pat)})
		}
		if f.IsTest() {
			tests++
		} else {
			code++
		}
	}
	if tests == 0 {
		out = append(out, Finding{Rule: RuleTests, Message: "the table lists no test file (such as test_*.py, *_test.go, *.test.ts or tests/*.rs): azero implements test first"})
	}
	if code == 0 {
		out = append(out, Finding{Rule: RuleCode, Message: "the table lists no code file, only tests"})
	}
	return out
}

// FindingsText lays the findings out, one a line, for the human and for
// the drafter.
func FindingsText(findings []Finding) string {
	var b strings.Builder
	for _, f := range findings {
		switch {
		case f.Line > 0 && f.Path != "":
			fmt.Fprintf(&b, "- line %d: `%s`: %s (%s)\n", f.Line, f.Path, f.Message, f.Rule)
		case f.Path != "":
			fmt.Fprintf(&b, "- `%s`: %s (%s)\n", f.Path, f.Message, f.Rule)
		default:
			fmt.Fprintf(&b, "- %s (%s)\n", f.Message, f.Rule)
		}
	}
	return b.String()
}
