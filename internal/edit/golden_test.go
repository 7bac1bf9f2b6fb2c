package edit_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/azero-dev/azero/internal/edit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden applies realistic multi-block replies, one per format, to a
// 700-line Python module and compares the file and the results with the
// golden files (go test -run TestGolden -update rewrites them). The third
// reply is the second written as Cline writes it, with markers of eleven
// characters, one block with ------- SEARCH and +++++++ REPLACE and one
// written two spaces a level: all three make the same file.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		source, reply string
	}{
		{"inventory.py", "inventory.changes.md"},
		{"inventory.py", "inventory.search.md"},
		{"inventory.py", "inventory.cline.md"},
	}
	outputs := make(map[string]string)
	for _, tt := range tests {
		source := readGolden(t, tt.source)
		reply := readGolden(t, tt.reply)
		blocks, err := edit.Parse(reply)
		if err != nil {
			t.Fatalf("%s: %v", tt.reply, err)
		}
		got, results, err := edit.Apply(source, blocks)
		if err != nil {
			t.Fatalf("%s: %v", tt.reply, err)
		}
		resultsJSON, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(tt.reply, ".md")
		checkGolden(t, base+".golden", got)
		checkGolden(t, base+".results.json", string(resultsJSON)+"\n")
		outputs[tt.reply] = got

		// The same reply on the CRLF version of the file gives the CRLF
		// version of the result.
		crlf, _, err := edit.Apply(toCRLF(source), blocks)
		if err != nil {
			t.Fatalf("%s on CRLF: %v", tt.reply, err)
		}
		if crlf != toCRLF(got) {
			t.Errorf("%s: CRLF result differs from the LF result with CRLF endings", tt.reply)
		}
	}
	for _, other := range []string{"inventory.search.md", "inventory.cline.md"} {
		if diff := cmp.Diff(outputs["inventory.changes.md"], outputs[other]); diff != "" {
			t.Errorf("two formats of the same edits disagree (-inventory.changes.md +%s):\n%s", other, diff)
		}
	}
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t, name)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func toCRLF(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
