package repomap

import (
	"fmt"
	"strings"
)

// Text lays the map out for a model, in Markdown sections.
func (m Map) Text() string {
	var b strings.Builder
	b.WriteString(m.treeText())
	b.WriteString(m.testText())
	if len(m.Outlines) > 0 {
		b.WriteString("\n## Outlines of the files the task is likely to touch\n\nEach line is a declaration, after its line number in the file.\n")
		for _, o := range m.Outlines {
			b.WriteString(outlineText(o))
		}
	}
	b.WriteString(m.guideText())
	return b.String()
}

func (m Map) treeText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Files\n\nThe %d %s git tracks, as a tree (a directory's entries indented under it", m.Files, plural(m.Files, "file"))
	if m.Folded {
		b.WriteString("; a directory shown as \"name/ … N files\" has its files left out for room")
	}
	b.WriteString("):\n\n")
	b.WriteString(m.Tree)
	return b.String()
}

func (m Map) testText() string {
	var b strings.Builder
	b.WriteString("\n## Tests\n\n")
	switch {
	case m.Runner != "":
		fmt.Fprintf(&b, "azero runs the tests with its %s runner. %s\n", m.Runner, m.Conventions)
	case m.RunnerProblem != "":
		fmt.Fprintf(&b, "azero cannot tell which test runner the project uses (%s).\n", m.RunnerProblem)
	}
	if m.Tests == 0 {
		b.WriteString("The project has no test files yet.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "The project has %d test %s, in:\n", m.Tests, plural(m.Tests, "file"))
	for _, d := range m.TestDirs {
		name := d.Dir + "/"
		if d.Dir == "." {
			name = "the root"
		}
		fmt.Fprintf(&b, "- %s (%d)\n", name, d.Files)
	}
	return b.String()
}

func outlineText(o Outline) string {
	return fmt.Sprintf("\n### %s (%s)\n\n%s", o.Path, o.Why, o.Text)
}

func (m Map) guideText() string {
	if m.Guide == nil {
		return ""
	}
	cut := ""
	if m.Guide.Cut {
		cut = ", its beginning"
	}
	return fmt.Sprintf("\n## The project's conventions (%s%s)\n\n%s\n", m.Guide.Path, cut, m.Guide.Text)
}
