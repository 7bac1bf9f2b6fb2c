// Package slug makes the short names azero derives from human text: branch
// names, run keys, audit directories, lineage and issue file names.
//
// A slug is lower-case ASCII letters and digits in runs joined by single
// hyphens; anything else (spaces, dots, slashes, "..", non-ASCII letters)
// separates runs, so a slug is always one safe path component and a valid
// git ref part. A slug cut to a length ends at a word boundary when one
// exists in its second half, never in the middle of a word.
package slug

import (
	"regexp"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// Make returns the slug of s, at most maxLen characters (0: no limit). It
// returns "" when s holds no ASCII letter or digit.
func Make(s string, maxLen int) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			continue
		}
		hyphen = true
	}
	return Cut(b.String(), maxLen)
}

// Cut shortens slug to at most maxLen characters, at the last hyphen that
// keeps at least half of maxLen, else mid-word; 0 means no limit.
func Cut(slug string, maxLen int) string {
	if maxLen <= 0 || len(slug) <= maxLen {
		return slug
	}
	cut := slug[:maxLen]
	if slug[maxLen] == '-' {
		return strings.TrimRight(cut, "-")
	}
	if i := strings.LastIndexByte(cut, '-'); i >= maxLen/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, "-")
}

var (
	// Leading issue references: "87 - ", "#87: ", "Issue #87: ", "#87 ",
	// "[#87] ", "(Issue 87) ".
	issuePrefix   = lazyre.New(`^\s*#?\d+\s*[-:.–—]\s*`)
	issueRefStart = lazyre.New(`(?i)^\s*(?:issue\s*#?\s*\d+|#\d+)\b\s*[-:.–—]?\s*`)
	issueBrackets = lazyre.New(`(?i)^\s*[\[(]\s*(?:issue\s*)?#?\d+\s*[\])]\s*[-:.–—]?\s*`)
	// A trailing one: " (#87)", " - Issue #87", " [#87]", " #87".
	issueSuffix = lazyre.New(`(?i)\s*(?:[-–—:,]\s*)?[\[(]?\s*(?:issue\s*#?\s*\d+|#\d+)\s*[\])]?\s*$`)
	kindPrefix  = lazyre.New(`(?i)^(feature|feat|bug|fix|chore|refactor|docs)\s*:\s*`) // "Feature: "
	// A design document's own label: "LLD: ", "Low-Level Design - ".
	docPrefix = lazyre.New(`(?i)^\s*(?:lld|hld|(?:low|high)[- ]level design|design(?:\s+doc(?:ument)?)?)\s*[:\-–—]\s*`)
)

// Title is a title without its issue number, its kind and a design
// document's label: "87 - Feature: Add X", "LLD: Add X (#87)" and "Issue
// #87: Add X" are all "Add X". The issue is named once, elsewhere (a
// commit's "Refs #87", a branch's "azero/87-..."), never twice.
func Title(title string) string {
	t := title
	for range 3 {
		before := t
		for _, re := range []*regexp.Regexp{docPrefix(), issueBrackets(), issueRefStart(), issuePrefix(), kindPrefix()} {
			t = re.ReplaceAllString(t, "")
		}
		if u := issueSuffix().ReplaceAllString(t, ""); strings.TrimSpace(u) != "" {
			t = u
		}
		if t == before {
			break
		}
	}
	return strings.TrimSpace(t)
}
