package web

import (
	"strings"

	"github.com/azero-dev/azero/internal/review"
)

// looksLikeDiff reports whether a report of unnamed format carries diffs
// (the review question after an unattended diff review shows the whole
// diff report).
func looksLikeDiff(report string) bool {
	return strings.Contains(report, "\ndiff --git ") || strings.HasPrefix(report, "diff --git ")
}

// classifyReport splits a report into lines classed the way the terminal
// colours it (review.ClassifyReport). With diff false every line is plain
// text. Joining every span's text with newlines between lines gives the
// report back, without its final newlines.
func classifyReport(report string, diff bool) []review.ReportLine {
	report = strings.TrimRight(report, "\n")
	if !diff {
		if report == "" {
			return nil
		}
		lines := strings.Split(report, "\n")
		out := make([]review.ReportLine, len(lines))
		for i, l := range lines {
			out[i] = review.ReportLine{Spans: []review.ReportSpan{{Text: l}}}
		}
		return out
	}
	return review.ClassifyReport(report)
}
