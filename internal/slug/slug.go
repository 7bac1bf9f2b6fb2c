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
	issuePrefix = lazyre.New(`^\s*#?\d+\s*[-:.]\s*`)                                   // "87 - ", "#87: "
	kindPrefix  = lazyre.New(`(?i)^(feature|feat|bug|fix|chore|refactor|docs)\s*:\s*`) // "Feature: "
)

// Title is a title without a leading issue number and kind: "87 - Feature:
// Add X" is "Add X".
func Title(title string) string {
	return strings.TrimSpace(kindPrefix().ReplaceAllString(issuePrefix().ReplaceAllString(title, ""), ""))
}
