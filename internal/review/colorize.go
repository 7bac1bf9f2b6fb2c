package review

import (
	"strings"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/lazyre"
)

var (
	statLine    = lazyre.New(`^( .* \| +\d+ )([+-]+)$`)
	flaggedLine = lazyre.New(`^  (NEW|MODIFIED|REPLACED|DELETED|RENAMED)( +.*)$`)
)

// A ReportSpan is a piece of a report line and what it is: "add" and
// "del" for a stat bar's halves, "change" for a flagged file's change
// type, "" for plain text.
type ReportSpan struct {
	Class string
	Text  string
}

// A ReportLine is one line of a report FormatReport rendered, classed:
// "stat" (the summary), "heading", "flagged", "rule" and "warning" and
// "banner" (a warning banner), "truncated", and for the diffs "file",
// "hunk", "add", "del" or "" (context). The terminal and the web page
// colour the same classes.
type ReportLine struct {
	Class string
	Spans []ReportSpan
}

// Text is the line as the report has it.
func (l ReportLine) Text() string {
	if len(l.Spans) == 1 {
		return l.Spans[0].Text
	}
	var b strings.Builder
	for _, s := range l.Spans {
		b.WriteString(s.Text)
	}
	return b.String()
}

// ClassifyReport splits a report into classed lines: the stat summary up
// to the first empty line, then flagged files, banners and diff lines.
// Joining the lines' texts with newlines gives the report back. Text that
// is not a report comes out as stat and diff lines by their look.
func ClassifyReport(report string) []ReportLine {
	if report == "" {
		return nil
	}
	lines := strings.Split(report, "\n")
	out := make([]ReportLine, len(lines))
	stat := true
	for i, l := range lines {
		plain := []ReportSpan{{Text: l}}
		switch {
		case l == "":
			stat = false
			out[i] = ReportLine{Spans: plain}
		case stat && statLine().MatchString(l):
			m := statLine().FindStringSubmatch(l)
			bar := m[2]
			plus := strings.Count(bar, "+")
			out[i] = ReportLine{Class: "stat", Spans: []ReportSpan{{Text: m[1]}, {Class: "add", Text: bar[:plus]}, {Class: "del", Text: bar[plus:]}}}
		case strings.HasSuffix(l, "flagged for review:") || l == "The change:":
			out[i] = ReportLine{Class: "heading", Spans: plain}
		case flaggedLine().MatchString(l):
			m := flaggedLine().FindStringSubmatch(l)
			out[i] = ReportLine{Class: "flagged", Spans: []ReportSpan{{Text: "  "}, {Class: "change", Text: m[1]}, {Text: m[2]}}}
		case l == bannerRule:
			out[i] = ReportLine{Class: "rule", Spans: plain}
		case strings.HasPrefix(l, "!! WARNING: "):
			out[i] = ReportLine{Class: "warning", Spans: plain}
		case strings.HasPrefix(l, "!! "):
			out[i] = ReportLine{Class: "banner", Spans: plain}
		case strings.HasPrefix(l, "... truncated: "):
			out[i] = ReportLine{Class: "truncated", Spans: plain}
		case stat:
			out[i] = ReportLine{Class: "stat", Spans: plain}
		default:
			out[i] = ReportLine{Class: iostreams.DiffLineClass(l), Spans: plain}
		}
	}
	return out
}

// ColorizeReport colours a report FormatReport rendered as plain text (a
// report stored with a run, or read from a question), the way FormatReport
// colours it for a terminal: stat bars, flagged files, banners, diff lines.
// Text that is not a report passes through with at most its diff-looking
// lines coloured.
func ColorizeReport(report string, cs iostreams.ColorScheme) string {
	if !cs.Enabled() || report == "" {
		return report
	}
	lines := ClassifyReport(report)
	out := make([]string, len(lines))
	for i, l := range lines {
		text := l.Text()
		switch l.Class {
		case "stat", "flagged":
			var b strings.Builder
			for _, s := range l.Spans {
				switch s.Class {
				case "add":
					b.WriteString(cs.Green(s.Text))
				case "del", "change":
					b.WriteString(cs.Red(s.Text))
				default:
					b.WriteString(s.Text)
				}
			}
			out[i] = b.String()
		case "heading":
			out[i] = cs.Bold(text)
		case "rule":
			out[i] = cs.Red(text)
		case "warning":
			out[i] = cs.Alert(text + " ")
		case "banner":
			if rest, ok := strings.CutPrefix(text, "!! before: "); ok {
				text = "!! " + cs.Bold("before: "+rest)
			}
			out[i] = text
		case "truncated":
			out[i] = cs.Yellow(text)
		default:
			out[i] = cs.DiffLine(text)
		}
	}
	return strings.Join(out, "\n")
}
