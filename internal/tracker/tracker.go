// Package tracker files issues: on GitHub (through the official REST API
// client, google/go-github) or in a local directory of the repository.
//
// Filing is idempotent: every issue body carries a marker naming the run
// that filed it, and a run that may already have filed (it was killed after
// the tracker answered but before the run was saved) finds its issue by the
// marker instead of filing a second one.
package tracker

import (
	"context"
	"fmt"
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

var (
	labelsLine = lazyre.New(`(?mi)^\s*\*\*Labels:?\*\*:?\s*(.*)$`)
	titleLine  = lazyre.New(`(?m)^#\s+(.+?)\s*#*\s*$`)
)

// ParseLabels reads the labels from a draft's "**Labels:**" line: names
// separated by commas, optionally in backticks.
func ParseLabels(draft string) []string {
	m := labelsLine().FindStringSubmatch(draft)
	if m == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(m[1], ",") {
		name := strings.TrimSpace(strings.Trim(strings.TrimSpace(part), "`*_\"'"))
		if name != "" && !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			out = append(out, name)
		}
	}
	return out
}

// ParseTitle returns the draft's first level-1 heading, without a leading
// "Issue:" style prefix, or "" when it has none.
func ParseTitle(draft string) string {
	m := titleLine().FindStringSubmatch(draft)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}
