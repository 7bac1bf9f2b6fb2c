package issue

import (
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/slug"
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

// CleanSlug turns s into a slug (see package slug) of at most MaxSlugLen
// characters; "" when s holds no letter or digit.
func CleanSlug(s string) string { return slug.Make(s, MaxSlugLen) }
