package edit

import (
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// CheckElision refuses blocks whose REPLACE WITH introduces a placeholder
// comment such as "# ... rest of code ..." or "// ... existing code ...":
// models write these instead of code they were too lazy to repeat, and
// applying them would delete that code. A placeholder line that FIND
// already had (it is in the file) is allowed. The first offending block is
// returned as an *ElisionError.
//
// Only whole-line comments are examined, so code such as Python's "..."
// (Ellipsis) or Go's "args..." is never mistaken for a placeholder.
func CheckElision(blocks []Block) error {
	for i, b := range blocks {
		if line, ok := introducedPlaceholder(b); ok {
			return &ElisionError{Block: blockNumber(b, i), Line: line}
		}
	}
	return nil
}

// introducedPlaceholder returns the first placeholder line of b.Replace
// that b.Find does not contain. Lines are compared without a line-number
// prefix ("12 | "), which Apply removes from a numbered block, so that a
// numbered placeholder is caught like any other.
func introducedPlaceholder(b Block) (string, bool) {
	var inFind map[string]bool
	for _, l := range splitBlockLines(b.Replace) {
		bare := withoutNumber(l)
		if !isPlaceholder(bare) {
			continue
		}
		if inFind == nil {
			inFind = make(map[string]bool)
			for _, f := range splitBlockLines(b.Find) {
				inFind[string(appendNormalized(nil, withoutNumber(f)))] = true
			}
		}
		if !inFind[string(appendNormalized(nil, bare))] {
			return l, true
		}
	}
	return "", false
}

// withoutNumber returns line without its line-number prefix, if any.
func withoutNumber(line string) string {
	if size, _, ok := numberPrefix(line); ok {
		return line[size:]
	}
	return line
}

// commentMarkers open a whole-line comment in the common languages; the
// longest come first so "<!--" is not read as "<".
var commentMarkers = []string{"<!--", "{/*", "/*", "//", "--", "#", ";", "%", "*"}

// commentClosers end a block comment on the same line.
var commentClosers = []string{"-->", "*/}", "*/"}

// isPlaceholder reports whether line is a comment that stands for omitted
// code.
func isPlaceholder(line string) bool {
	body, ok := commentBody(line)
	if !ok {
		return false
	}
	words := strings.TrimSpace(strings.Trim(body, ".…()[]{}<>:;,-–—_*!'\" \t"))
	dotted := hasEllipsis(body)
	if words == "" {
		// "// ...", "/* ... */", "<!-- … -->": nothing but an ellipsis.
		return dotted
	}
	lower := strings.ToLower(words)
	if startsWithEllipsis(body) && elisionWordRE().MatchString(lower) {
		return true
	}
	return placeholderRE().MatchString(lower)
}

// commentBody returns the text of a whole-line comment without its
// markers; ok is false when line is not a comment.
func commentBody(line string) (string, bool) {
	s := strings.TrimSpace(line)
	for _, m := range commentMarkers {
		if rest, ok := strings.CutPrefix(s, m); ok {
			if m == "*" && strings.HasPrefix(rest, "*") {
				return "", false // "**bold**" or "**kwargs", not a comment
			}
			if m == "#" && (strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "[")) {
				return "", false // a shebang or a Rust attribute
			}
			for _, c := range commentClosers {
				rest = strings.TrimSuffix(strings.TrimSpace(rest), c)
			}
			return strings.TrimLeft(rest, m[:1]), true
		}
	}
	return "", false
}

func hasEllipsis(s string) bool {
	return strings.Contains(s, "...") || strings.Contains(s, "…")
}

func startsWithEllipsis(s string) bool {
	s = strings.TrimLeft(s, " \t([{")
	return strings.HasPrefix(s, "...") || strings.HasPrefix(s, "…")
}

// elisionWordRE finds a word that, after a leading ellipsis, marks
// omitted code: "// ... existing code ...", "# ...rest of the class".
var elisionWordRE = lazyre.New(`\b(rest|remaining|remainder|existing|unchanged|other|others|previous|same|omitted|omit|more|etc|code|here|before|original|snip|snipped|truncated|elided|remains?|as is|keep|kept)\b`)

// placeholderRE matches, as the whole comment, the phrases models use for
// omitted code even without an ellipsis. Each phrase needs a word such as
// "unchanged" or "omitted", so an ordinary section comment like
// "# rest of the tests" or "// other helpers" is not caught.
var placeholderRE = lazyre.New(`^(?:` + strings.Join([]string{
	// "rest of the file unchanged", "the rest of the class remains the same"
	`(?:the )?(?:rest|remainder) of (?:the )?(?:\w+ ){0,2}?\w+ (?:is |are |remains? |stays? |goes |kept )?(?:unchanged|the same|as before|as is|omitted|unmodified|not shown|here)`,
	// "existing code", "existing code here", "previous implementation unchanged"
	`(?:existing|previous|original) (?:code|implementation)(?: here| (?:is |remains? |stays? )?(?:unchanged|the same|as before|as is))?`,
	// "other methods unchanged", "remaining functions remain the same"
	`(?:existing|remaining|other|previous|original) (?:\w+ ){0,2}?\w+ (?:is |are |remains? |remain |stays? |goes )?(?:unchanged|the same|as before|as is|omitted|unmodified|not shown|go here|goes here)`,
	// "unchanged", "(unchanged)", "no changes", "not changed", "same as before"
	`unchanged|no changes?|not changed|unmodified|same as (?:before|above|original|existing)(?: code)?`,
	// "code omitted for brevity", "implementation omitted", "snip"
	`(?:\w+ ){0,3}?(?:omitted|elided|truncated|snipped)(?: for brevity| here)?|snip`,
	// "keep existing code", "keep the original implementation as is"
	`keep (?:the )?(?:existing|original|rest of the) (?:\w+ )?(?:code|implementation|lines)(?: as is| unchanged)?`,
	// "implementation unchanged", "body omitted", "code continues"
	`(?:implementation|body|code) (?:is )?(?:unchanged|as before|continues|the same)`,
	// "etc", "and so on"
	`etc|and so on`,
}, "|") + `)$`)
