package web

import (
	"regexp"
	"strings"
)

// span is a piece of a report line with the CSS class that colours it.
type span struct {
	Class string
	Text  string
}

// reportLine is one line of a report as the page shows it.
type reportLine struct {
	Class string // the line's own class (a banner, a diff line)
	Spans []span
}

var (
	statLine    = regexp.MustCompile(`^( .* \| +\d+ )([+-]+)$`)
	flaggedLine = regexp.MustCompile(`^  (NEW|MODIFIED|REPLACED|DELETED|RENAMED)( +.*)$`)
	bannerRule  = strings.Repeat("!", 78)
)

// looksLikeDiff reports whether a report of unnamed format carries diffs
// (the review question after an unattended diff review shows the whole
// diff report).
func looksLikeDiff(report string) bool {
	return strings.Contains(report, "\ndiff --git ") || strings.HasPrefix(report, "diff --git ")
}

// classifyReport splits a report into lines classed the way the terminal
// colours it (review.ColorizeReport): the stat summary's bars, flagged
// files, the warning banners, and diff lines. With diff false every line
// is plain text. Joining every span's text with newlines between lines
// gives the report back.
func classifyReport(report string, diff bool) []reportLine {
	if report == "" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(report, "\n"), "\n")
	out := make([]reportLine, len(lines))
	stat := true
	for i, l := range lines {
		plain := []span{{Text: l}}
		if !diff {
			out[i] = reportLine{Spans: plain}
			continue
		}
		switch {
		case l == "":
			stat = false
			out[i] = reportLine{Spans: plain}
		case stat && statLine.MatchString(l):
			m := statLine.FindStringSubmatch(l)
			bar := m[2]
			plus := strings.Count(bar, "+")
			out[i] = reportLine{Class: "stat", Spans: []span{{Text: m[1]}, {Class: "add", Text: bar[:plus]}, {Class: "del", Text: bar[plus:]}}}
		case strings.HasSuffix(l, "flagged for review:") || l == "The change:":
			out[i] = reportLine{Class: "heading", Spans: plain}
		case strings.HasPrefix(l, "  ") && flaggedLine.MatchString(l):
			m := flaggedLine.FindStringSubmatch(l)
			out[i] = reportLine{Class: "flagged", Spans: []span{{Text: "  "}, {Class: "change", Text: m[1]}, {Text: m[2]}}}
		case l == bannerRule:
			out[i] = reportLine{Class: "rule", Spans: plain}
		case strings.HasPrefix(l, "!! WARNING: "):
			out[i] = reportLine{Class: "warning", Spans: plain}
		case strings.HasPrefix(l, "!! "):
			out[i] = reportLine{Class: "banner", Spans: plain}
		case strings.HasPrefix(l, "... truncated: "):
			out[i] = reportLine{Class: "truncated", Spans: plain}
		case stat:
			out[i] = reportLine{Class: "stat", Spans: plain}
		default:
			out[i] = reportLine{Class: diffClass(l), Spans: plain}
		}
	}
	return out
}

// diffClass classes one line of a unified diff.
func diffClass(l string) string {
	switch {
	case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return "file"
	case strings.HasPrefix(l, "@@"):
		return "hunk"
	case strings.HasPrefix(l, "+"):
		return "add"
	case strings.HasPrefix(l, "-"):
		return "del"
	}
	return ""
}
