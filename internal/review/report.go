package review

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/shell"
)

// ReportOptions tune FormatReport.
type ReportOptions struct {
	// Color styles the report; the zero value writes plain text. Pass the
	// scheme of the stream the report goes to (iostreams decides: none
	// with NO_COLOR or when it is not a terminal).
	Color iostreams.ColorScheme
	// MaxDiffLines caps each flagged file's diff; default
	// DefaultMaxDiffLines.
	MaxDiffLines int
	// Staged says the analysis compared the index with HEAD; it names the
	// git command that shows a truncated diff in full.
	Staged bool
	// AllDiffs also shows the diffs of the files nothing flagged, after
	// the flagged ones.
	AllDiffs bool
	// FlaggedOnly shows only the flagged files (their banners and diffs):
	// no summary, and nothing when nothing is flagged.
	FlaggedOnly bool
	// Unflagged shows the summary and every file's diff without judging
	// them (no flagged files, no banners): a part of a change reviewed
	// within the whole, such as what a revision changed.
	Unflagged bool
	// Compare, when set, is what a truncated diff's git command compares
	// ("TREE1 TREE2"), instead of HEAD with the working tree or the index.
	Compare string
}

// maxBar is the widest +/- bar of the summary.
const maxBar = 40

// ReportFormat names the layout of FormatReport's text, so that channels
// showing a question with such a report can colour it (ColorizeReport
// for terminals, the page's classes for the web).
const ReportFormat = "diff-report"

// FormatReport renders the review: a `git diff --stat` style summary of
// every file, the list of flagged files, then for each flagged file a
// WARNING banner with its before/after line counts and its diff from
// diffs (keyed by FilePath), capped at MaxDiffLines with a line saying how
// much was cut; with AllDiffs, then the other files' diffs.
func FormatReport(files []FileAnalysis, diffs map[string]FileDiff, opts ReportOptions) string {
	cs := opts.Color
	maxLines := opts.MaxDiffLines
	if maxLines <= 0 {
		maxLines = DefaultMaxDiffLines
	}
	var b strings.Builder
	flagged := 0
	for _, f := range files {
		if f.RequiresReview && !opts.Unflagged {
			flagged++
		}
	}
	if opts.FlaggedOnly && flagged == 0 {
		return ""
	}
	if len(files) == 0 {
		b.WriteString("No changes: nothing to review.\n")
		return b.String()
	}
	if !opts.FlaggedOnly {
		writeStat(&b, files, cs)
	}
	switch {
	case opts.Unflagged:
		for _, f := range files {
			b.WriteString("\n")
			writeDiff(&b, f, diffs, maxLines, opts, cs)
		}
		return b.String()
	case flagged == 0:
		b.WriteString("\nNo file needs special attention (nothing replaced, deleted or mostly rewritten).\n")
	default:
		fmt.Fprintf(&b, "\n%s\n", cs.Bold(fmt.Sprintf("%s flagged for review:", plural(flagged, "file", "files"))))
		for _, f := range files {
			if f.RequiresReview {
				fmt.Fprintf(&b, "  %-8s %s\n", cs.Red(string(f.ChangeType)), displayName(f))
			}
		}
		for _, f := range files {
			if f.RequiresReview {
				b.WriteString("\n")
				writeBanner(&b, f, diffs[f.FilePath], cs)
				writeDiff(&b, f, diffs, maxLines, opts, cs)
			}
		}
	}
	if opts.AllDiffs && flagged < len(files) {
		fmt.Fprintf(&b, "\n%s\n", cs.Bold("The change:"))
		for _, f := range files {
			if !f.RequiresReview {
				b.WriteString("\n")
				writeDiff(&b, f, diffs, maxLines, opts, cs)
			}
		}
	}
	return b.String()
}

// writeStat writes the summary the way `git diff --stat` does.
func writeStat(b *strings.Builder, files []FileAnalysis, cs iostreams.ColorScheme) {
	names := make([]string, len(files))
	nameWidth, countWidth, maxChange := 0, 0, 0
	added, deleted := 0, 0
	for i, f := range files {
		names[i] = displayName(f)
		nameWidth = max(nameWidth, utf8.RuneCountInString(names[i]))
		count := "Bin"
		if !f.Binary {
			count = strconv.Itoa(f.LinesAdded + f.LinesDeleted)
			maxChange = max(maxChange, f.LinesAdded+f.LinesDeleted)
		}
		countWidth = max(countWidth, len(count))
		added += f.LinesAdded
		deleted += f.LinesDeleted
	}
	for i, f := range files {
		pad := strings.Repeat(" ", nameWidth-utf8.RuneCountInString(names[i]))
		if f.Binary {
			fmt.Fprintf(b, " %s%s | %*s\n", names[i], pad, countWidth, "Bin")
			continue
		}
		plus, minus := scaleBar(f.LinesAdded, maxChange), scaleBar(f.LinesDeleted, maxChange)
		bar := cs.Green(strings.Repeat("+", plus)) + cs.Red(strings.Repeat("-", minus))
		fmt.Fprintf(b, " %s%s | %*d %s\n", names[i], pad, countWidth, f.LinesAdded+f.LinesDeleted, bar)
	}
	fmt.Fprintf(b, " %s changed", plural(len(files), "file", "files"))
	if added > 0 || deleted == 0 {
		fmt.Fprintf(b, ", %s(+)", plural(added, "insertion", "insertions"))
	}
	if deleted > 0 || added == 0 {
		fmt.Fprintf(b, ", %s(-)", plural(deleted, "deletion", "deletions"))
	}
	b.WriteString("\n")
}

// scaleBar scales n to the bar width like git: any change shows.
func scaleBar(n, maxChange int) int {
	if n == 0 || maxChange <= maxBar {
		return n
	}
	return 1 + n*(maxBar-1)/maxChange
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// bannerRule frames a warning banner.
var bannerRule = strings.Repeat("!", 78)

func writeBanner(b *strings.Builder, f FileAnalysis, d FileDiff, cs iostreams.ColorScheme) {
	why, counts := reason(f, d)
	fmt.Fprintln(b, cs.Red(bannerRule))
	warning := fmt.Sprintf("!! WARNING: %s: %s", f.ChangeType, displayPath(f.FilePath))
	if cs.Enabled() {
		warning += " " // the alert background ends one cell after the name
	}
	fmt.Fprintln(b, cs.Alert(warning))
	if f.OldPath != "" {
		fmt.Fprintf(b, "!! renamed from %s\n", displayPath(f.OldPath))
	}
	fmt.Fprintf(b, "!! %s\n", cs.Bold(counts))
	fmt.Fprintf(b, "!! %s\n", why)
	if f.Test && f.ChangeType != Deleted {
		writeLostLines(b, f, d, cs)
	}
	fmt.Fprintln(b, cs.Red(bannerRule))
}

// maxLostLines caps the lines a test file loses listed in its banner (its
// diff below shows them all).
const maxLostLines = 40

// writeLostLines lists, in a test file's banner, the lines its diff
// deletes: a row of a table test, an assertion, a whole test.
func writeLostLines(b *strings.Builder, f FileAnalysis, d FileDiff, cs iostreams.ColorScheme) {
	var lost []string
	hunks := false
	for _, l := range d.Lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks = true
		case hunks && strings.HasPrefix(l, "-") && len(lost) < maxLostLines:
			lost = append(lost, l)
		}
	}
	n := max(f.LinesDeleted, len(lost)) // the diff kept may be cut short
	if n == 0 || f.Binary {
		return
	}
	fmt.Fprintf(b, "!! The tests are the referee's evidence; this test file loses %s:\n", plural(n, "line", "lines"))
	for _, l := range lost {
		fmt.Fprintf(b, "!!   %s\n", cs.DiffLine(sanitize(l)))
	}
	if n > len(lost) {
		fmt.Fprintf(b, "!!   … and %d more (in the diff below)\n", n-len(lost))
	}
}

// reason says why a file was flagged, in the words of what happened to
// it, and its before/after line of the banner.
func reason(f FileAnalysis, d FileDiff) (why, counts string) {
	counts = fmt.Sprintf("before: %s, after: %s (%d → %d; -%d +%d), %.0f%% changed",
		plural(f.OriginalLines, "line", "lines"), plural(f.LinesAfter(), "line", "lines"),
		f.OriginalLines, f.LinesAfter(), f.LinesDeleted, f.LinesAdded, f.ChangeRatio*100)
	switch {
	case f.Kind == Submodule:
		return submoduleReason(f, d)
	case f.Kind == Symlink:
		return linkReason(f)
	case f.Kind == LineEndings:
		return fmt.Sprintf("Only the line endings changed (%s → %s): the text is otherwise identical, but every converted line counts as deleted and added.", f.Before, f.After),
			counts + ", line endings " + f.Before + " → " + f.After
	case f.Binary && f.ChangeType == Deleted:
		return "This binary file is deleted.", "binary file: no line counts"
	case f.Binary:
		return "This binary file changed: its content cannot be shown line by line.", "binary file: no line counts"
	case f.ChangeType == Deleted:
		return fmt.Sprintf("This file is deleted: all %s are removed.", plural(f.OriginalLines, "line", "lines")), counts
	case f.ChangeType == Replaced:
		return "More than half of the original lines were deleted and new content written in their place.", counts
	case float64(f.LinesDeleted) > Threshold*float64(f.OriginalLines):
		return fmt.Sprintf("This file lost %d of its %d lines.", f.LinesDeleted, f.OriginalLines), counts
	case f.Test && f.ChangeRatio <= Threshold:
		return fmt.Sprintf("This test file loses %s of its %d: losing any test needs your approval.", plural(f.LinesDeleted, "line", "lines"), f.OriginalLines), counts
	}
	return "More than half of this file changed.", counts
}

func linkReason(f FileAnalysis) (why, counts string) {
	target := func(t string) string {
		if t == "" {
			return "(not a link)"
		}
		return "→ " + displayPath(t)
	}
	counts = "symbolic link: before " + target(f.Before) + ", after " + target(f.After)
	if f.ChangeType == Deleted {
		counts = "symbolic link: before " + target(f.Before) + ", after: deleted"
	}
	switch {
	case f.ChangeType == Deleted:
		why = fmt.Sprintf("This symbolic link to %s is deleted.", displayPath(f.Before))
	case f.Before != "" && f.After != "":
		why = fmt.Sprintf("This symbolic link now points to %s instead of %s: whatever reads it gets another file.", displayPath(f.After), displayPath(f.Before))
	case f.After != "":
		why = fmt.Sprintf("This file is replaced by a symbolic link to %s: its content is gone from this path.", displayPath(f.After))
	case f.Before != "":
		why = fmt.Sprintf("This symbolic link to %s is replaced by a regular file.", displayPath(f.Before))
	default:
		why = "This symbolic link changed."
	}
	return why, counts
}

func submoduleReason(f FileAnalysis, d FileDiff) (why, counts string) {
	after, dirty := f.After, false
	if after == "" && f.ChangeType != Deleted {
		// The working tree's commit is in git's patch of the submodule.
		for _, l := range d.Lines {
			if id, ok := strings.CutPrefix(l, "+Subproject commit "); ok {
				after, dirty = strings.CutSuffix(id, "-dirty")
			}
		}
	}
	commit := func(id string) string {
		if id == "" {
			return "unknown"
		}
		return "commit " + gitx.ShortID(id)
	}
	counts = "submodule: before " + commit(f.Before) + ", after " + commit(after)
	switch {
	case f.ChangeType == Deleted:
		return fmt.Sprintf("This submodule is removed (it was at %s).", commit(f.Before)), "submodule: before " + commit(f.Before) + ", after: removed"
	case f.Before == "":
		return fmt.Sprintf("A submodule at %s takes the place of this file.", commit(after)), counts
	case after == f.Before && dirty:
		return "This submodule has uncommitted changes in its checkout; the commit it is at did not change (a commit here does not take them).", counts
	case after == "":
		return fmt.Sprintf("This submodule moves from %s to another commit: see what changed with git -C %s log.", commit(f.Before), shell.Quote(f.FilePath)), counts
	}
	why = fmt.Sprintf("This submodule moves from %s to %s: see what changed with git -C %s log --oneline %s..%s.",
		commit(f.Before), commit(after), shell.Quote(f.FilePath), gitx.ShortID(f.Before), gitx.ShortID(after))
	if dirty {
		why += " Its checkout also has uncommitted changes, which a commit here does not take."
	}
	return why, counts
}

func writeDiff(b *strings.Builder, f FileAnalysis, diffs map[string]FileDiff, maxLines int, opts ReportOptions, cs iostreams.ColorScheme) {
	see := "git diff HEAD -- " + shell.Quote(f.FilePath)
	switch {
	case opts.Compare != "":
		see = "git diff " + opts.Compare + " -- " + shell.Quote(f.FilePath)
	case opts.Staged:
		see = "git diff --cached -- " + shell.Quote(f.FilePath)
	}
	d, ok := diffs[f.FilePath]
	if !ok {
		fmt.Fprintf(b, "(no diff available: see %s)\n", see)
		return
	}
	shown := d.Lines[:min(len(d.Lines), maxLines)]
	for _, line := range shown {
		b.WriteString(cs.DiffLine(sanitize(line)))
		b.WriteByte('\n')
	}
	if rest := d.Total - len(shown); rest > 0 {
		fmt.Fprintln(b, cs.Yellow(fmt.Sprintf("... truncated: %s (see %s)", plural(rest, "more line", "more lines"), see)))
	}
}

// displayName is a file's name in the summary: "old => new" for a rename.
func displayName(f FileAnalysis) string {
	if f.OldPath != "" {
		return displayPath(f.OldPath) + " => " + displayPath(f.FilePath)
	}
	return displayPath(f.FilePath)
}

// displayPath shows a path as it is when every character is visible, else
// quoted with escapes (a newline, a terminal escape, a right-to-left
// override or invalid UTF-8 are never written raw to a terminal).
func displayPath(p string) string {
	if p == "" || strings.TrimSpace(p) != p || strings.ContainsAny(p, `"\`) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return p
}

// sanitize makes control and format characters of a diff line visible
// (^[ for ESC, ^M for a carriage return, <U+202E> for a bidi override,
// \xff for invalid UTF-8), so file content cannot move the cursor, erase
// lines or reorder text on the reviewer's terminal. Tabs stay.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r < 0xa0, unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
