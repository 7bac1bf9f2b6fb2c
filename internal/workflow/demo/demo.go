// Package demo holds what `azero demo` runs the implementation workflow
// on: a small Go module (textkit) whose Slugify only lower-cases, a design
// document asking for real URL slugs, and the replies the offline scripted
// coder gives (tests first, then an implementation that misses a case, then
// the fix after it sees the failing test).
package demo

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/safewrite"
)

//go:embed project
var project embed.FS

// CoderScript is the scripted coder's replies (a mock:scripted script).
//
//go:embed coder.toml
var CoderScript []byte

// Design is the design document's path inside the project.
const Design = "docs/design/42-slugify.md"

// WriteProject writes the demo project into dir (which must exist) through
// w, and returns the files written.
func WriteProject(ctx context.Context, w *safewrite.Writer, dir string) ([]string, error) {
	var written []string
	err := fs.WalkDir(project, "project", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := project.ReadFile(p)
		if err != nil {
			return err
		}
		rel := p[len("project/"):]
		// Stored under another name: a go.mod would make the embedded
		// directory a module of its own, which go:embed refuses.
		if rel == "go.mod.demo" {
			rel = "go.mod"
		}
		if _, err := w.Write(ctx, safewrite.Request{Root: dir, Path: rel, Content: data, Actor: "azero demo"}); err != nil {
			return fmt.Errorf("write demo file %s: %w", rel, err)
		}
		written = append(written, rel)
		return nil
	})
	return written, err
}

// Setup is what the demo runs on, made in its base directory.
type Setup struct {
	Project string // the project's repository: base/textkit
	Design  string // the design document in it
	Script  string // the scripted coder's replies, beside the project (not part of the change under review)
}

// Prepare makes the demo in base (created if missing): the project, a git
// repository of it with one commit (with an identity of its own, so the
// demo works where git has none), and the coder's script beside it. It
// refuses a base that already holds a demo project.
func Prepare(ctx context.Context, w *safewrite.Writer, base string) (Setup, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return Setup{}, err
	}
	proj := filepath.Join(base, "textkit")
	if err := os.Mkdir(proj, 0o755); err != nil {
		return Setup{}, fmt.Errorf("create the demo project: %w (choose another --dir)", err)
	}
	if _, err := WriteProject(ctx, w, proj); err != nil {
		return Setup{}, err
	}
	if _, err := w.Write(ctx, safewrite.Request{Root: base, Path: "coder-script.toml", Content: CoderScript, Actor: "azero demo"}); err != nil {
		return Setup{}, err
	}
	repo := gitx.Repo{Dir: proj}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"config", "user.name", "azero demo"},
		{"config", "user.email", "demo@azero.invalid"},
		{"add", "--all"},
		{"commit", "--quiet", "--no-verify", "-m", "textkit: initial import"},
	} {
		if _, err := repo.Run(ctx, args...); err != nil {
			return Setup{}, fmt.Errorf("prepare the demo repository: %w", err)
		}
	}
	return Setup{Project: proj, Design: filepath.Join(proj, Design), Script: filepath.Join(base, "coder-script.toml")}, nil
}
