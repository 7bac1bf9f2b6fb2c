// Package tracker files issues: on GitHub (through the official REST API
// client, google/go-github) or in a local directory of the repository.
//
// Filing is idempotent: every issue body carries a marker naming the run
// that filed it, and a run that may already have filed (it was killed after
// the tracker answered but before the run was saved) finds its issue by the
// marker instead of filing a second one.
//
// A draft's "# " line is its title and its "**Labels:**" line its labels
// (ParseTitle, ParseLabels); the body filed is the rest (Body), so
// neither shows twice. A tracker lists the labels it has (Labels) for the
// drafter, and creates missing ones only when an issue naming them is
// filed (EnsureLabels).
package tracker

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// Issue is an issue to file, or one filed.
type Issue struct {
	Number int      `json:"number"`
	URL    string   `json:"url"`
	Title  string   `json:"title"`
	Body   string   `json:"-"`
	Labels []string `json:"labels,omitempty"`
	State  string   `json:"state,omitempty"` // open or closed, when read (Reader)
}

// Tracker files issues somewhere.
type Tracker interface {
	// Name says where issues go, for messages ("github owner/name").
	Name() string
	// Check verifies with a real call that the tracker is reachable and
	// the credentials work, before any model is called.
	Check(ctx context.Context) error
	// Find returns the issue whose body contains marker, if any.
	Find(ctx context.Context, marker string) (Issue, bool, error)
	// Labels returns the names of the labels the repository has, for the
	// drafter to choose from.
	Labels(ctx context.Context) ([]string, error)
	// EnsureLabels creates the labels that do not exist yet and returns
	// their names.
	EnsureLabels(ctx context.Context, labels []string) ([]string, error)
	// Create files the issue.
	Create(ctx context.Context, is Issue) (Issue, error)
}

// Marker returns the hidden marker a run puts in the body of its issue.
func Marker(runID string) string {
	return fmt.Sprintf("<!-- azero:run %s -->", runID)
}

// The title and labels lines are read one line at a time, so that a
// pattern never reaches across a line break, and the line a Parse function
// reads is exactly the one Body leaves out.
var (
	labelsLine = lazyre.New(`(?i)^[ \t]*\*\*Labels:?\*\*:?[ \t]*(.*)$`)
	titleLine  = lazyre.New(`^#[ \t]+(\S.*?)[ \t]*#*[ \t]*$`)
	// newLabel is how a draft proposes a label the repository does not
	// have yet: "new: performance" (or "performance (new)").
	newPrefix = lazyre.New(`(?i)^new[ \t]*:[ \t]*`)
	newSuffix = lazyre.New(`(?i)[ \t]*\((new|proposed)\)$`)
)

// lineOf returns the index of the first line re matches, and the match,
// or -1.
func lineOf(lines []string, re *regexp.Regexp) (int, []string) {
	for i, l := range lines {
		if m := re.FindStringSubmatch(strings.TrimSuffix(l, "\r")); m != nil {
			return i, m
		}
	}
	return -1, nil
}

// ParseLabels reads the labels from a draft's "**Labels:**" line: names
// separated by commas, optionally in backticks. A label the draft proposes
// to create ("new: performance") is returned by its name.
func ParseLabels(draft string) []string {
	_, m := lineOf(strings.Split(draft, "\n"), labelsLine())
	if m == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(m[1], ",") {
		name := unquote(part)
		name = unquote(newSuffix().ReplaceAllString(newPrefix().ReplaceAllString(name, ""), ""))
		if name != "" && !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			out = append(out, name)
		}
	}
	return out
}

func unquote(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "`*_\"'"))
}

// ParseTitle returns the draft's first level-1 heading, or "" when it has
// none.
func ParseTitle(draft string) string {
	_, m := lineOf(strings.Split(draft, "\n"), titleLine())
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// Body returns the draft without the title line and the labels line that
// ParseTitle and ParseLabels read: they become the issue's title and
// labels, and a body repeating them shows them twice. A blank line left
// doubled where a line was taken out is dropped, and so are blank lines
// at the start.
func Body(draft string) string {
	lines := strings.Split(draft, "\n")
	for _, re := range []*regexp.Regexp{titleLine(), labelsLine()} {
		i, _ := lineOf(lines, re)
		if i < 0 {
			continue
		}
		blank := func(j int) bool { return j >= 0 && j < len(lines) && strings.TrimSpace(lines[j]) == "" }
		end := i + 1
		if blank(i-1) && blank(end) {
			end++
		}
		lines = append(lines[:i:i], lines[end:]...)
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n")
}
