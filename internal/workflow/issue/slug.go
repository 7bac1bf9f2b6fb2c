package issue

import (
	"path/filepath"
	"strings"
)

// MaxSlugLen bounds a slug, keeping directory names readable.
const MaxSlugLen = 64

// SlugFromFile derives a run's slug from its brief's file name:
// "notes/governance-notes.md" gives "governance-notes". It returns "" when
// nothing usable is left (see CleanSlug).
func SlugFromFile(path string) string {
	base := filepath.Base(filepath.Clean(path))
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return CleanSlug(base)
}

// CleanSlug turns s into a slug: lower-case ASCII letters and digits in
// runs joined by single hyphens, at most MaxSlugLen characters. Anything
// else (spaces, dots, slashes, "..", non-ASCII letters) becomes a hyphen, so
// a slug is always one safe path component. It returns "" when s holds no
// letter or digit.
func CleanSlug(s string) string {
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
	out := b.String()
	if len(out) > MaxSlugLen {
		out = strings.TrimRight(out[:MaxSlugLen], "-")
	}
	return out
}
