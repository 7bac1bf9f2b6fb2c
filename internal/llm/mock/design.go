package mock

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// The purposes the design workflow asks with: a design document drafted
// from an issue and a map of the repository, and its review.
const (
	PurposeDesign       = "design"
	PurposeDesignReview = "design-review"
)

// DesignReviewerText is the built-in reviewer's reply to a design.
const DesignReviewerText = `**Verdict:** APPROVED

## Tier 1: blocking

- None

## Tier 2: should fix

- None

## Tier 3: suggestions

- None

_Offline review by mock:scripted: no model read this design._
`

// designDraft is the built-in drafter's design: a document in the shape of
// azero's LLD template (internal/workflow/design/template.md) whose Files Changed table changes one source file
// of the repository the request maps, and adds (or modifies) its test
// file beside it, by the language's convention. It reads the request's
// <issue> (or <brief>) and <repository> parts; it is deterministic.
func designDraft(msg string) string {
	title, number, summary := "Untitled change", "", "(the request had no issue)"
	if is, ok := part(msg, "issue"); ok {
		title, number, summary = issueParts(is)
	} else if b, ok := part(msg, "brief"); ok {
		summary = strings.TrimSpace(b)
		for _, l := range strings.Split(b, "\n") {
			if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#")); l != "" {
				title = l
				break
			}
		}
	}
	if r := []rune(title); len(r) > 72 {
		title = strings.TrimSpace(string(r[:72]))
	}
	repo, _ := part(msg, "repository")
	code, test := designFiles(treePaths(repo))
	heading, issueLine := "# Feature: "+title, ""
	if number != "" {
		heading, issueLine = "# "+number+" - Feature: "+title, "* **Issue:** #"+number+"\n"
	}
	return fmt.Sprintf(`%s

## 1. Context & Goal

%s* **Objective:** %s

%s

### Open Questions

- None

## 2. Proposed Changes

### 2.1 Files Changed

| File | Change Type | Description |
|------|-------------|-------------|
| %s | %s | The change the issue asks for. |
| %s | %s | Tests of the change. |

### 2.2 Data Structures and Signatures

The change keeps the existing signatures of %s and adds what the issue asks for.

### 2.3 Logic Flow

1. The new behaviour is reached through the existing entry points of %s.
2. Its result is returned to the caller as before.

## 3. Requirements

1. The behaviour the issue describes works as described.
2. Existing behaviour is unchanged.

## 4. Test Scenarios

| ID | Scenario | Input | Expected Output |
|----|----------|-------|-----------------|
| 010 | The case the issue describes | Its input | The described result |
| 020 | An existing case | Its input | The result it had before |

## 5. Risks and Mitigations

- None known.

_Drafted offline by mock:scripted: no model wrote this design._
`, heading, issueLine, title, summary, "`"+code.path+"`", code.change, "`"+test.path+"`", test.change, "`"+code.path+"`", "`"+code.path+"`")
}

// part returns the text between the <tag> and </tag> lines of msg (the
// way the workflows delimit every part of a prompt).
func part(msg, tag string) (string, bool) {
	open, end := "<"+tag+">\n", "\n</"+tag+">"
	i := strings.Index("\n"+msg, "\n"+open)
	if i < 0 {
		return "", false
	}
	body, _, ok := strings.Cut(msg[i+len(open):], end)
	return body, ok
}

var issueNumber = lazyre.New(`(?i)\bissue #(\d+)\b`)

// issueParts reads the issue part: its "# " title, its number and the
// first paragraph of its body.
func issueParts(is string) (title, number, summary string) {
	title, summary = "Untitled change", ""
	if m := issueNumber().FindStringSubmatch(is); m != nil {
		number = m[1]
	}
	var body []string
	for _, l := range strings.Split(is, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "# ") && title == "Untitled change":
			title = strings.TrimSpace(t[2:])
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "**") || issueNumber().MatchString(t):
			if len(body) > 0 && t == "" {
				return title, number, strings.Join(body, "\n")
			}
		default:
			body = append(body, t)
		}
	}
	if len(body) == 0 {
		body = []string{title + "."}
	}
	return title, number, strings.Join(body, "\n")
}

// treePaths reads the file tree of a repository map: the lines after its
// "## Files" heading's paragraph, each entry indented two spaces under its
// directory ("name/"); a folded directory ("name/ … N files") and a cut
// list ("… N more entries") name no file.
func treePaths(repo string) []string {
	_, rest, ok := strings.Cut(repo, "## Files\n")
	if !ok {
		return nil
	}
	lines := strings.Split(rest, "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	for i < len(lines) && strings.TrimSpace(lines[i]) != "" { // the paragraph saying what the tree is
		i++
	}
	var out, stack []string
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		l := lines[i]
		t := strings.TrimLeft(l, " ")
		level := (len(l) - len(t)) / 2
		if strings.HasPrefix(t, "…") || level > len(stack) {
			continue
		}
		stack = stack[:level]
		switch {
		case strings.Contains(t, " … "):
		case strings.HasSuffix(t, "/"):
			stack = append(stack, strings.TrimSuffix(t, "/"))
		default:
			out = append(out, path.Join(append(append([]string(nil), stack...), t)...))
		}
	}
	return out
}

// designFile is a row of the built-in design's table.
type designFile struct{ path, change string }

// sourceExts are the languages the built-in design changes, by how a test
// file of each is named.
var sourceExts = []string{".go", ".py", ".js", ".mjs", ".ts", ".rs"}

// designFiles chooses the source file to change (the shallowest, then the
// first by name) and its test file.
func designFiles(paths []string) (code, test designFile) {
	have := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range paths {
		have[p] = true
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var sources []string
	for _, p := range paths {
		ext := path.Ext(p)
		if slices.Contains(sourceExts, ext) && !testLike(p) && !strings.Contains(p, "vendor/") && !strings.Contains(p, "node_modules/") {
			sources = append(sources, p)
		}
	}
	sort.SliceStable(sources, func(i, j int) bool {
		return strings.Count(sources[i], "/") < strings.Count(sources[j], "/")
	})
	if len(sources) == 0 {
		return designFile{"change.py", "Add"}, designFile{"test_change.py", "Add"}
	}
	src := sources[0]
	dir, base := path.Dir(src), strings.TrimSuffix(path.Base(src), path.Ext(src))
	var t string
	switch ext := path.Ext(src); ext {
	case ".go":
		t = path.Join(dir, base+"_test.go")
	case ".py":
		t = path.Join(dir, "test_"+base+".py")
		if dirs["tests"] && !have[t] {
			t = path.Join("tests", "test_"+base+".py")
		}
	case ".rs":
		t = path.Join("tests", base+".rs")
	default:
		t = path.Join(dir, base+".test"+ext)
	}
	change := "Add"
	if have[t] {
		change = "Modify"
	}
	return designFile{src, "Modify"}, designFile{t, change}
}

// testLike reports a file that is a test or lives with tests.
func testLike(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.HasPrefix(p, "tests/") ||
		strings.Contains(p, "/tests/") || base == "conftest.py" || base == "setup.py"
}
