// Package textkit holds small text helpers.
package textkit

import "strings"

// Title upper-cases the first letter of every word.
func Title(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// Truncate shortens s to at most n runes, adding "…" when it cut something.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Slugify turns a title into a URL slug.
// TODO(#42): it only lower-cases for now; see docs/design/42-slugify.md.
func Slugify(s string) string {
	return strings.ToLower(s)
}
