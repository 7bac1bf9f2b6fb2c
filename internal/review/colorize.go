package review

import (
	"regexp"
	"strings"

	"github.com/azero-dev/azero/internal/iostreams"
)

var (
	statLine    = regexp.MustCompile(`^( .* \| +\d+ )([+-]+)$`)
	flaggedLine = regexp.MustCompile(`^  (NEW|MODIFIED|REPLACED|DELETED|RENAMED)( +.*)$`)
)

// ColorizeReport colours a report FormatReport rendered as plain text (a
// report stored with a run, or read from a question), the way FormatReport
// colours it for a terminal: stat bars, flagged files, banners, diff lines.
// Text that is not a report passes through with at most its diff-looking
// lines coloured.
func ColorizeReport(report string, cs iostreams.ColorScheme) string {
	if !cs.Enabled() || report == "" {
		return report
	}
	lines := strings.Split(report, "\n")
	stat := true
	for i, l := range lines {
		switch {
		case l == "":
			stat = false
		case stat && statLine.MatchString(l):
			m := statLine.FindStringSubmatch(l)
			bar := m[2]
			plus := strings.Count(bar, "+")
			lines[i] = m[1] + cs.Green(bar[:plus]) + cs.Red(bar[plus:])
		case strings.HasSuffix(l, "flagged for review:") || l == "The change:":
			lines[i] = cs.Bold(l)
		case flaggedLine.MatchString(l):
			m := flaggedLine.FindStringSubmatch(l)
			lines[i] = "  " + cs.Red(m[1]) + m[2]
		case l == bannerRule:
			lines[i] = cs.Red(l)
		case strings.HasPrefix(l, "!! WARNING: "):
			lines[i] = cs.Alert(l + " ")
		case strings.HasPrefix(l, "!! before: "):
			lines[i] = "!! " + cs.Bold(strings.TrimPrefix(l, "!! "))
		case strings.HasPrefix(l, "... truncated: "):
			lines[i] = cs.Yellow(l)
		case !stat:
			lines[i] = cs.DiffLine(l)
		}
	}
	return strings.Join(lines, "\n")
}
