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
