package agenthook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Notebook edit modes of Claude Code's NotebookEdit (edit_mode); "" is
// replace.
const (
	NotebookReplace = "replace"
	NotebookInsert  = "insert"
	NotebookDelete  = "delete"
)

// NotebookEdit is one NotebookEdit call: which cell, and what becomes of
// it.
type NotebookEdit struct {
	CellID    string // "" with insert: the new cell goes first
	NewSource string
	Mode      string // NotebookReplace, NotebookInsert or NotebookDelete
}

// NotebookChange is what a NotebookEdit would do to a notebook's cell
// source: the lines of all its cells before, and the lines it deletes (a
// deleted cell's lines, or a replaced cell's lines that its new source
// does not keep) and adds.
type NotebookChange struct {
	Cells        int      // cells before the edit
	Cell         string   // the cell edited, as the call named it ("" for an insert at the start)
	Index        int      // its index in the notebook (where an insert goes)
	Lines        int      // lines of cell source in the whole notebook before the edit
	Added        int      // lines added
	DeletedLines []string // the lines deleted, without line endings
}

// NotebookError says why a NotebookEdit cannot be judged: the notebook is
// not one, or the call names no cell it has. Its text is written for the
// model.
type NotebookError struct{ Reason string }

func (e *NotebookError) Error() string { return e.Reason }

// notebookJSON is the part of an .ipynb document (nbformat 4) azero reads.
type notebookJSON struct {
	Cells *[]notebookCell `json:"cells"`
}

type notebookCell struct {
	ID     string          `json:"id"`
	Source json.RawMessage `json:"source"`
}

// cellSource reads a cell's source: nbformat's multiline string, one
// string or a list of strings to be joined. A missing source is empty.
func cellSource(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("a cell's source is neither a string nor a list of strings")
	}
	return strings.Join(parts, ""), nil
}

// sourceLines splits a cell's source into lines without their endings; a
// last line without a newline is a line, an empty source has none.
func sourceLines(src string) []string {
	if src == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// ApplyNotebookEdit computes what Claude Code's NotebookEdit would do to
// the notebook doc (the .ipynb file's content), the way Claude Code finds
// the cell: by its id, else by an id "cell-N" naming the N-th cell (0
// based), which is how Claude Code shows the cells of a notebook whose
// cells have no ids. An insert goes after the cell named, or first when
// none is; a replace or a delete needs a cell. It is pure.
func ApplyNotebookEdit(doc []byte, e NotebookEdit) (NotebookChange, error) {
	var nb notebookJSON
	if err := decodeStrict(doc, &nb); err != nil {
		return NotebookChange{}, &NotebookError{Reason: fmt.Sprintf("it is not valid notebook JSON (%v), so NotebookEdit cannot edit it either: read the file, and repair it with Write", err)}
	}
	if nb.Cells == nil {
		return NotebookChange{}, &NotebookError{Reason: "it has no \"cells\" list, so it is not a Jupyter notebook (nbformat 4) NotebookEdit can edit: read the file, and change it with Write or Edit"}
	}
	cells := *nb.Cells
	ch := NotebookChange{Cells: len(cells), Cell: e.CellID}
	sources := make([]string, len(cells))
	for i, c := range cells {
		src, err := cellSource(c.Source)
		if err != nil {
			return NotebookChange{}, &NotebookError{Reason: fmt.Sprintf("it is not valid notebook JSON (cell %d: %v), so NotebookEdit cannot edit it either: read the file, and repair it with Write", i, err)}
		}
		sources[i] = src
		ch.Lines += len(sourceLines(src))
	}
	mode := e.Mode
	if mode == "" {
		mode = NotebookReplace
	}
	switch mode {
	case NotebookReplace, NotebookInsert, NotebookDelete:
	default:
		return NotebookChange{}, &NotebookError{Reason: fmt.Sprintf("edit_mode %q is none of replace, insert and delete", e.Mode)}
	}

	index := -1 // the cell named
	if e.CellID != "" {
		for i, c := range cells {
			if c.ID == e.CellID {
				index = i
				break
			}
		}
		if index < 0 {
			if n, ok := cellNumber(e.CellID); ok && n <= len(cells) && (n < len(cells) || mode == NotebookReplace) {
				index = n
			}
		}
		if index < 0 {
			return NotebookChange{}, &NotebookError{Reason: fmt.Sprintf("it has no cell with the id %q (%s): read the notebook again and name one of its cells", e.CellID, cellIDs(cells))}
		}
	} else if mode != NotebookInsert {
		return NotebookChange{}, &NotebookError{Reason: fmt.Sprintf("a %s needs the cell_id of the cell to %s", mode, mode)}
	}

	newLines := sourceLines(e.NewSource)
	switch {
	case mode == NotebookInsert:
		ch.Index = index + 1 // after the cell named, or first
		ch.Added = len(newLines)
	case index == len(cells):
		// Claude Code turns a replace of the cell after the last into
		// an insert there.
		ch.Index, ch.Added = index, len(newLines)
	case mode == NotebookDelete:
		ch.Index = index
		ch.DeletedLines = sourceLines(sources[index])
	default:
		ch.Index = index
		old := sourceLines(sources[index])
		for _, d := range lcs.DiffLines(old, newLines) {
			ch.DeletedLines = append(ch.DeletedLines, old[d.Start:d.End]...)
			ch.Added += d.ReplEnd - d.ReplStart
		}
	}
	return ch, nil
}

// cellNumber reads Claude Code's "cell-N" id of the N-th cell.
func cellNumber(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "cell-")
	if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" || len(rest) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// cellIDs lists the ids a NotebookEdit may name, at most 10 of them.
func cellIDs(cells []notebookCell) string {
	if len(cells) == 0 {
		return "it has no cells: insert one without a cell_id"
	}
	const most = 10
	ids := make([]string, 0, most)
	for i, c := range cells[:min(len(cells), most)] {
		id := c.ID
		if id == "" {
			id = "cell-" + strconv.Itoa(i)
		}
		ids = append(ids, strconv.Quote(id))
	}
	list := strings.Join(ids, ", ")
	if len(cells) > most {
		list += fmt.Sprintf(" and %d more", len(cells)-most)
	}
	return "its cells are " + list
}
