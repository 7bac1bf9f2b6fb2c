package agenthook_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/agenthook"
	"github.com/azero-dev/azero/internal/agenthook/hooktest"
)

// TestApplyNotebookEdit computes NotebookEdit calls on the real notebooks
// of hooktest (nbformat 4.5 with cell ids, 4.4 without).
func TestApplyNotebookEdit(t *testing.T) {
	t.Parallel()
	analysis := hooktest.Notebook(t, "analysis.ipynb") // intro 3, load 90, clean 20, plot 37
	legacy := hooktest.Notebook(t, "legacy.ipynb")     // cell-0 1, cell-1 100, cell-2 19 (a string source)
	tests := []struct {
		name    string
		doc     []byte
		edit    agenthook.NotebookEdit
		lines   int
		index   int
		deleted int
		added   int
		first   string // the first line deleted
		err     string
	}{
		{"delete a cell deletes its lines", analysis, agenthook.NotebookEdit{CellID: "load", Mode: "delete"}, 150, 1, 90, 0, "rows_1 = load(1)", ""},
		{"replace deletes the lines the new source does not keep", analysis,
			agenthook.NotebookEdit{CellID: "intro", NewSource: "# Sales analysis\n\nLoad, clean, plot."}, 150, 0, 1, 1, "Load the rows, clean them, plot them.", ""},
		{"replace with the same source deletes nothing", analysis,
			agenthook.NotebookEdit{CellID: "intro", Mode: "replace", NewSource: "# Sales analysis\n\nLoad the rows, clean them, plot them.\n"}, 150, 0, 0, 0, "", ""},
		{"replace everything", analysis, agenthook.NotebookEdit{CellID: "load", NewSource: "rows = load_all()"}, 150, 1, 90, 1, "rows_1 = load(1)", ""},
		{"insert after a cell", analysis, agenthook.NotebookEdit{CellID: "plot", Mode: "insert", NewSource: "a\nb\nc\n"}, 150, 4, 0, 3, "", ""},
		{"insert first", analysis, agenthook.NotebookEdit{Mode: "insert", NewSource: "import os"}, 150, 0, 0, 1, "", ""},
		{"cell-N names the N-th cell without ids", legacy, agenthook.NotebookEdit{CellID: "cell-1", Mode: "delete"}, 120, 1, 100, 0, "legacy_1 = 1", ""},
		{"a source held as one string", legacy, agenthook.NotebookEdit{CellID: "cell-2", Mode: "delete"}, 120, 2, 19, 0, "report(1)", ""},
		{"cell-N also in a notebook with ids", analysis, agenthook.NotebookEdit{CellID: "cell-3", Mode: "delete"}, 150, 3, 37, 0, "plot(1)", ""},
		{"replace after the last cell is an insert", legacy, agenthook.NotebookEdit{CellID: "cell-3", NewSource: "x"}, 120, 3, 0, 1, "", ""},
		{"delete after the last cell", legacy, agenthook.NotebookEdit{CellID: "cell-3", Mode: "delete"}, 0, 0, 0, 0, "", `no cell with the id "cell-3"`},
		{"unknown id", analysis, agenthook.NotebookEdit{CellID: "nope"}, 0, 0, 0, 0, "", `its cells are "intro", "load", "clean", "plot"): read the notebook again`},
		{"replace without a cell", analysis, agenthook.NotebookEdit{NewSource: "x"}, 0, 0, 0, 0, "", "needs the cell_id"},
		{"delete without a cell", analysis, agenthook.NotebookEdit{Mode: "delete"}, 0, 0, 0, 0, "", "needs the cell_id"},
		{"unknown mode", analysis, agenthook.NotebookEdit{CellID: "load", Mode: "move"}, 0, 0, 0, 0, "", `edit_mode "move"`},
		{"truncated JSON", analysis[:len(analysis)/2], agenthook.NotebookEdit{CellID: "load"}, 0, 0, 0, 0, "", "not valid notebook JSON"},
		{"no cells", []byte(`{"metadata": {}, "nbformat": 4}`), agenthook.NotebookEdit{Mode: "insert"}, 0, 0, 0, 0, "", `no "cells" list`},
		{"a source that is a number", []byte(`{"cells": [{"id": "a", "source": 3}]}`), agenthook.NotebookEdit{CellID: "a"}, 0, 0, 0, 0, "", "neither a string nor a list"},
		{"an array, not a notebook", []byte(`[]`), agenthook.NotebookEdit{Mode: "insert"}, 0, 0, 0, 0, "", "not valid notebook JSON"},
		{"empty notebook: insert", []byte(`{"cells": []}`), agenthook.NotebookEdit{Mode: "insert", NewSource: "x"}, 0, 0, 0, 1, "", ""},
		{"empty notebook: the ids say so", []byte(`{"cells": []}`), agenthook.NotebookEdit{CellID: "a", Mode: "delete"}, 0, 0, 0, 0, "", "it has no cells"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ch, err := agenthook.ApplyNotebookEdit(tt.doc, tt.edit)
			if tt.err != "" {
				var ne *agenthook.NotebookError
				if !errors.As(err, &ne) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want a *NotebookError saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Lines != tt.lines || ch.Index != tt.index || len(ch.DeletedLines) != tt.deleted || ch.Added != tt.added {
				t.Errorf("change = lines %d, index %d, deleted %d, added %d; want %d, %d, %d, %d",
					ch.Lines, ch.Index, len(ch.DeletedLines), ch.Added, tt.lines, tt.index, tt.deleted, tt.added)
			}
			if tt.first != "" && (len(ch.DeletedLines) == 0 || ch.DeletedLines[0] != tt.first) {
				t.Errorf("deleted lines %q, want them to start with %q", ch.DeletedLines, tt.first)
			}
		})
	}
}

// TestNotebookCellIDsAreCapped: a deny for a cell that does not exist
// lists at most 10 ids, and says how many more there are.
func TestNotebookCellIDsAreCapped(t *testing.T) {
	t.Parallel()
	var cells []string
	for i := range 25 {
		cells = append(cells, fmt.Sprintf(`{"id": "c%d", "source": ["x\n"]}`, i))
	}
	doc := []byte(`{"cells": [` + strings.Join(cells, ",") + `]}`)
	_, err := agenthook.ApplyNotebookEdit(doc, agenthook.NotebookEdit{CellID: "zz", Mode: "delete"})
	if err == nil || !strings.Contains(err.Error(), `"c9" and 15 more`) || strings.Contains(err.Error(), `"c10"`) {
		t.Fatalf("err = %v", err)
	}
}
