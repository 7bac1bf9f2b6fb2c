// Package contextload decides which files may be sent to a model as
// context, and loads them.
//
// Every rule is checked before any model call (spec #87, N0): a context
// path must stay inside the repository (no ".." component, no symlink that
// leads out); secret-looking files are refused (.env*, *.pem, *.key,
// id_rsa*, *secret*, credentials files); each file must be at most 100 KB
// and text; the whole context must stay under 200,000 tokens. A refusal is
// a *RefusedError naming the file and the rule. Directories are expanded to
// the files inside them, skipping .git.
package contextload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
)

// Limits from the specification.
const (
	MaxFileBytes   = 100 << 10
	MaxTotalTokens = 200_000
)

// Rules a path can break.
const (
	RuleTraversal = "no-parent-traversal"
	RuleOutside   = "inside-repository"
	RuleSecret    = "no-secret-files"
	RuleSize      = "max-100KB-per-file"
	RuleTokens    = "max-200k-tokens-total"
	RuleBinary    = "text-only"
	RuleMissing   = "must-exist"
)

// RefusedError reports a context path that may not be sent.
type RefusedError struct {
	Path   string
	Rule   string
	Detail string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("context %s refused (%s): %s", e.Path, e.Rule, e.Detail)
}

// File is one loaded context file.
type File struct {
	Rel     string `json:"path"` // slash-separated, relative to the root
	Content string `json:"-"`
	Bytes   int    `json:"bytes"`
	Tokens  int    `json:"tokens"`
}

// Options tune the loader.
type Options struct {
	// CountTokens estimates tokens; required.
	CountTokens func(string) int
	// Reserved tokens already used by other parts of the prompt (the design
	// document), counted against the total.
	Reserved int
}

// Load checks and reads the context paths (relative to root or absolute
// inside it). A directory gives the files git would see in it: tracked
// ones and untracked ones that .gitignore does not exclude (every file
// below it when root is not a git work tree). A file named on its own is
// taken even if ignored. It returns every file in a stable order, or the
// first refusal.
func Load(ctx context.Context, root string, paths []string, opts Options) ([]File, error) {
	if opts.CountTokens == nil {
		return nil, errors.New("contextload: no token counter")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("repository root %s: %w", root, err)
	}
	var files []File
	seen := map[string]bool{}
	total := opts.Reserved
	for _, p := range paths {
		rels, err := expand(ctx, realRoot, p)
		if err != nil {
			return nil, err
		}
		for _, rel := range rels {
			if seen[rel] {
				continue
			}
			seen[rel] = true
			f, err := load(realRoot, rel)
			if err != nil {
				return nil, err
			}
			f.Tokens = opts.CountTokens(f.Content)
			total += f.Tokens
			if total > MaxTotalTokens {
				return nil, &RefusedError{Path: rel, Rule: RuleTokens,
					Detail: fmt.Sprintf("the context would reach %d tokens (limit %d); send fewer or smaller files", total, MaxTotalTokens)}
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// Check applies the path rules to one path without reading it. It returns
// the path relative to root.
func Check(root, p string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("repository root %s: %w", root, err)
	}
	return checkPath(realRoot, p)
}

func checkPath(realRoot, p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", &RefusedError{Path: p, Rule: RuleOutside, Detail: "empty path or NUL byte"}
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if part == ".." {
			return "", &RefusedError{Path: p, Rule: RuleTraversal, Detail: "paths with .. are not accepted; name the file inside the repository"}
		}
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(realRoot, p)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &RefusedError{Path: p, Rule: RuleMissing, Detail: "no such file in the repository"}
	}
	if err != nil {
		return "", &RefusedError{Path: p, Rule: RuleOutside, Detail: err.Error()}
	}
	rel, err := filepath.Rel(realRoot, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &RefusedError{Path: p, Rule: RuleOutside, Detail: "it resolves to " + resolved + ", outside the repository"}
	}
	rel = filepath.ToSlash(rel)
	if rule := secretRule(rel); rule != "" {
		return "", &RefusedError{Path: p, Rule: RuleSecret, Detail: "it looks like a secret (" + rule + "); secrets are never sent to a model"}
	}
	first, _, _ := strings.Cut(rel, "/")
	if first == ".git" {
		return "", &RefusedError{Path: p, Rule: RuleOutside, Detail: "files inside .git are not context"}
	}
	return rel, nil
}

// secretPatterns match file names that usually hold credentials.
var secretPatterns = []string{
	".env*", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*secret*",
	"credentials", "credentials.*", "*credentials*", ".netrc", ".pypirc", ".npmrc", "*.p12", "*.pfx", "*.keystore",
}

// LooksSecret reports whether rel (slash-separated, relative to the
// repository) looks like it holds credentials, and the pattern it matches:
// a file never shown to a model, nor named as a file to change.
func LooksSecret(rel string) (string, bool) {
	pat := secretRule(rel)
	return pat, pat != ""
}

// secretRule returns the pattern rel matches, checking every component so
// that a file inside secrets/ or .env.d/ is refused too.
func secretRule(rel string) string {
	for _, part := range strings.Split(rel, "/") {
		lower := strings.ToLower(part)
		for _, pat := range secretPatterns {
			if ok, _ := path.Match(pat, lower); ok {
				return pat
			}
		}
	}
	return ""
}

// expand checks p and, for a directory, lists the files below it.
func expand(ctx context.Context, realRoot, p string) ([]string, error) {
	rel, err := checkPath(realRoot, p)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(realRoot, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil {
		return nil, &RefusedError{Path: p, Rule: RuleMissing, Detail: err.Error()}
	}
	if !info.IsDir() {
		return []string{rel}, nil
	}
	if listed, ok := gitFiles(ctx, realRoot, rel); ok {
		var out []string
		for _, r := range listed {
			fi, err := os.Lstat(filepath.Join(realRoot, filepath.FromSlash(r)))
			if err != nil || fi.IsDir() {
				continue // tracked but deleted, or a submodule
			}
			checked, err := checkPath(realRoot, r)
			if err != nil {
				return nil, err
			}
			out = append(out, checked)
		}
		sort.Strings(out)
		return out, nil
	}
	var out []string
	err = filepath.WalkDir(full, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		r, err := filepath.Rel(realRoot, fp)
		if err != nil {
			return err
		}
		// Every file found is checked like a named one, symlinks included.
		checked, err := checkPath(realRoot, filepath.ToSlash(r))
		if err != nil {
			return err
		}
		out = append(out, checked)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// gitFiles lists the files of dir (relative to root) that git sees: tracked
// and untracked but not ignored, relative to root (which may be below the
// work tree's top). ok is false when root is not in a work tree.
func gitFiles(ctx context.Context, root, dir string) ([]string, bool) {
	out, err := gitx.Repo{Dir: root}.Run(ctx, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	if err != nil {
		return nil, false
	}
	var files []string
	seen := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files, true
}

func load(realRoot, rel string) (File, error) {
	full := filepath.Join(realRoot, filepath.FromSlash(rel))
	data, err := iostreams.ReadRegularFile(full, MaxFileBytes)
	var notRegular *iostreams.NotRegularError
	var tooLarge *iostreams.InputTooLargeError
	switch {
	case errors.As(err, &notRegular):
		// A named pipe or a device may never end, or never begin: opening
		// one could block azero for good.
		return File{}, &RefusedError{Path: rel, Rule: RuleBinary, Detail: iostreams.FileKind(notRegular.Mode) + ", not a regular file: only text files can be sent as context"}
	case errors.As(err, &tooLarge):
		return File{}, &RefusedError{Path: rel, Rule: RuleSize,
			Detail: fmt.Sprintf("over the %d-byte limit; pass the relevant part only", MaxFileBytes)}
	case errors.Is(err, fs.ErrNotExist):
		return File{}, &RefusedError{Path: rel, Rule: RuleMissing, Detail: err.Error()}
	case err != nil:
		return File{}, fmt.Errorf("read context %s: %w", rel, err)
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return File{}, &RefusedError{Path: rel, Rule: RuleBinary, Detail: "binary files cannot be sent as context"}
	}
	return File{Rel: rel, Content: string(data), Bytes: len(data)}, nil
}
