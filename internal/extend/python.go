package extend

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/eol"
)

//go:embed extend.py
var pyScript string

// pythonTimeout bounds one run of the analysis script.
const pythonTimeout = 30 * time.Second

type pyNode struct {
	Kind      string   `json:"kind"`
	Names     []string `json:"names"`
	Start     int      `json:"start"`
	End       int      `json:"end"`
	Docstring bool     `json:"docstring"`
	Members   []pyNode `json:"members"`
}

type pyModule struct {
	Error string   `json:"error"`
	Body  []pyNode `json:"body"`
}

// analysePython describes the top-level statements of each source with
// the target's own python3 and its ast module, so the grammar is exactly
// the one the project runs.
func analysePython(ctx context.Context, rel string, sources ...[]byte) ([]pyModule, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, &Error{Path: rel, Reason: "extend for Python runs python3 to read the class structure, and python3 is not on PATH: install it, or use append, insert or replace"}
	}
	in := make([]string, len(sources))
	for i, s := range sources {
		in[i] = string(s)
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode python sources: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, pythonTimeout)
	defer cancel()
	// -I: isolated, so neither the environment nor the current directory
	// can inject modules into the analysis.
	cmd := exec.CommandContext(ctx, py, "-I", "-c", pyScript)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &Error{Path: rel, Reason: fmt.Sprintf("python3 could not analyse the source: %s", strings.TrimSpace(stderr.String()))}
		}
		return nil, fmt.Errorf("run python3: %w", err)
	}
	var mods []pyModule
	if err := json.Unmarshal(out, &mods); err != nil || len(mods) != len(sources) {
		return nil, &Error{Path: rel, Reason: fmt.Sprintf("python3 (%s) gave an unreadable analysis; extend needs Python 3.8 or later", py)}
	}
	return mods, nil
}

// mergePython merges piece into the Python module existing: members of a
// class that already exists are inserted at the end of that class with the
// class's indentation, new imports join the existing imports, and
// everything else is appended. A member or top-level name that already
// exists is an error, never a duplicate.
func mergePython(ctx context.Context, rel string, existing, piece []byte) ([]byte, error) {
	fail := func(format string, args ...any) error {
		return &Error{Path: rel, Reason: fmt.Sprintf(format, args...)}
	}
	piece = eol.Match(existing, piece)
	mods, err := analysePython(ctx, rel, existing, piece)
	if err != nil {
		return nil, err
	}
	if mods[0].Error != "" {
		return nil, fail("the existing file does not parse as Python: %s", mods[0].Error)
	}
	if mods[1].Error != "" {
		return nil, fail("the new content does not parse as Python: %s", mods[1].Error)
	}
	oldBody, newBody := mods[0].Body, mods[1].Body
	oldLines, newLines := eol.SplitKeep(existing), eol.SplitKeep(piece)
	nl := eol.Of(existing)

	classes := map[string]pyNode{}
	top := map[string]bool{}
	imports := map[string]bool{}
	lastImport := 0
	for _, n := range oldBody {
		if n.Kind == "ClassDef" {
			classes[n.Names[0]] = n
		}
		for _, name := range n.Names {
			top[name] = true
		}
		if n.Kind == "Import" || n.Kind == "ImportFrom" {
			imports[normalisedText(oldLines, n.Start, n.End)] = true
			lastImport = n.End
		}
	}

	type insertion struct {
		after int
		text  []byte
	}
	var ins []insertion
	var newImports, tail bytes.Buffer
	prevEnd := 0
	for i, n := range newBody {
		segStart := commentStart(newLines, n.Start, prevEnd)
		prevEnd = n.End
		switch {
		case i == 0 && n.Docstring:
			// The new content's module docstring is not a member.
		case n.Kind == "Import" || n.Kind == "ImportFrom":
			key := normalisedText(newLines, n.Start, n.End)
			if !imports[key] {
				imports[key] = true
				newImports.Write(joinLines(newLines[n.Start-1:n.End], nl))
			}
		case n.Kind == "ClassDef" && classes[n.Names[0]].Kind != "":
			name := n.Names[0]
			old := classes[name]
			members := n.Members
			if len(members) > 0 && members[0].Docstring {
				members = members[1:]
			}
			if len(members) == 0 {
				continue
			}
			have := map[string]bool{}
			for _, m := range old.Members {
				for _, mn := range m.Names {
					have[mn] = true
				}
			}
			for _, m := range members {
				for _, mn := range m.Names {
					if have[mn] {
						return nil, fail("%s.%s already exists; extend adds members, it does not replace them (use an edit or replace)", name, mn)
					}
					have[mn] = true
				}
			}
			from, err := bodyIndent(newLines, n, members[0])
			if err != nil {
				return nil, fail("new class %s: %v", name, err)
			}
			to, err := bodyIndent(oldLines, old, old.Members[0])
			if err != nil {
				return nil, fail("class %s: %v", name, err)
			}
			start := commentStart(newLines, members[0].Start, n.Start)
			var b bytes.Buffer
			b.Write(nl)
			b.Write(reindent(newLines[start-1:n.End], from, to, nl))
			ins = append(ins, insertion{after: old.End, text: b.Bytes()})
		default:
			for _, name := range n.Names {
				if top[name] {
					return nil, fail("%s is already defined at the top level of the file; extend adds members, it does not replace them", name)
				}
				top[name] = true
			}
			tail.Write(nl)
			if n.Kind == "FunctionDef" || n.Kind == "AsyncFunctionDef" || n.Kind == "ClassDef" {
				tail.Write(nl)
			}
			tail.Write(joinLines(newLines[segStart-1:n.End], nl))
		}
	}

	if newImports.Len() > 0 {
		anchor := lastImport
		switch {
		case anchor > 0:
		case len(oldBody) > 0 && oldBody[0].Docstring:
			anchor = oldBody[0].End
		case len(oldBody) > 0:
			// Above the comments of the first statement, below a shebang
			// or encoding line, which must stay first.
			anchor = commentStart(oldLines, oldBody[0].Start, headerLines(oldLines)) - 1
		default:
			anchor = len(oldLines)
		}
		ins = append(ins, insertion{after: anchor, text: newImports.Bytes()})
	}

	// Apply insertions from the bottom up so line numbers stay valid;
	// insertions at one line keep their order.
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].after > ins[j].after })
	lines := oldLines
	for _, in := range ins {
		if in.after > 0 && !eol.EndsWithNewline(lines[in.after-1]) {
			lines[in.after-1] = append(append([]byte{}, lines[in.after-1]...), nl...)
		}
		insLines := eol.SplitKeep(in.text)
		merged := make([][]byte, 0, len(lines)+len(insLines))
		merged = append(merged, lines[:in.after]...)
		merged = append(merged, insLines...)
		merged = append(merged, lines[in.after:]...)
		lines = merged
	}
	out := bytes.Join(lines, nil)
	if tail.Len() > 0 {
		if len(out) > 0 && !eol.EndsWithNewline(out) {
			out = append(out, nl...)
		}
		out = append(out, tail.Bytes()...)
	}

	check, err := analysePython(ctx, rel, out)
	if err != nil {
		return nil, err
	}
	if check[0].Error != "" {
		return nil, fail("merging would produce invalid Python (%s); nothing was changed", check[0].Error)
	}
	return out, nil
}

// commentStart extends a statement starting at line start upward over the
// comment lines directly above it, never to or above line floor.
func commentStart(lines [][]byte, start, floor int) int {
	for start-1 > floor && start-2 < len(lines) {
		t := bytes.TrimSpace(lines[start-2])
		if len(t) == 0 || t[0] != '#' {
			break
		}
		start--
	}
	return start
}

// headerLines counts the lines that must stay at the top of a Python
// file: a shebang on line 1 and an encoding declaration on line 1 or 2.
func headerLines(lines [][]byte) int {
	n := 0
	for i := 0; i < len(lines) && i < 2; i++ {
		l := bytes.TrimSpace(lines[i])
		isShebang := i == 0 && bytes.HasPrefix(l, []byte("#!"))
		isCoding := bytes.HasPrefix(l, []byte("#")) && (bytes.Contains(l, []byte("coding:")) || bytes.Contains(l, []byte("coding=")))
		if !isShebang && !isCoding {
			break
		}
		n = i + 1
	}
	return n
}

// bodyIndent returns the indentation of a class's member, refusing a
// class whose body shares the header's line.
func bodyIndent(lines [][]byte, class, member pyNode) ([]byte, error) {
	if member.Start-1 >= len(lines) || class.Start-1 >= len(lines) {
		return nil, errors.New("line numbers out of range")
	}
	ind := leadingSpace(lines[member.Start-1])
	if len(ind) <= len(leadingSpace(lines[class.Start-1])) {
		return nil, errors.New("its body is on the header's line; put the body on lines of its own to extend it")
	}
	return ind, nil
}

func leadingSpace(line []byte) []byte {
	return line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
}

// reindent moves lines from the indentation unit from (the new class's
// body indentation) to to (the existing class's): a line indented by k
// units of from gets k units of to, so a 2-space method joins a 4-space
// class as 4-space code. Other lines keep their extra indentation after
// the first unit; lines not starting with from (continuations of
// multi-line strings) are kept as they are.
func reindent(lines [][]byte, from, to, nl []byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			b.Write(nl)
			continue
		}
		ws := leadingSpace(l)
		switch {
		case len(from) > 0 && len(ws)%len(from) == 0 && bytes.Equal(ws, bytes.Repeat(from, len(ws)/len(from))):
			b.Write(bytes.Repeat(to, len(ws)/len(from)))
			l = l[len(ws):]
		case bytes.HasPrefix(l, from):
			b.Write(to)
			l = l[len(from):]
		}
		b.Write(l)
		if !eol.EndsWithNewline(l) {
			b.Write(nl)
		}
	}
	return b.Bytes()
}

func joinLines(lines [][]byte, nl []byte) []byte {
	out := bytes.Join(lines, nil)
	if len(out) > 0 && !eol.EndsWithNewline(out) {
		out = append(out, nl...)
	}
	return out
}

// normalisedText is a statement's text with each line trimmed, so the
// same import written with other indentation or line ending matches.
func normalisedText(lines [][]byte, start, end int) string {
	var parts []string
	for i := start - 1; i < end && i < len(lines); i++ {
		parts = append(parts, strings.TrimSpace(string(lines[i])))
	}
	return strings.Join(parts, "\n")
}
