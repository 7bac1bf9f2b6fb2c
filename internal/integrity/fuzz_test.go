package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPackedRef reads any packed-refs file: what it returns is the ref's
// own line and the peeled lines after it, nothing else.
func FuzzPackedRef(f *testing.F) {
	f.Add("# pack-refs with: peeled fully-peeled sorted \n1111 refs/heads/azero/x\n^2222\n3333 refs/heads/main\n")
	f.Add("1111 refs/heads/azero/xy\n2222 refs/heads/azero/x\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(t.TempDir(), "packed-refs")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := packedRef(p, "refs/heads/azero/x")
		if err != nil {
			return // a line longer than the scanner's buffer
		}
		for _, l := range strings.Split(got, "\n") {
			if got != "" && !strings.HasSuffix(l, " refs/heads/azero/x") && !strings.HasPrefix(l, "^") {
				t.Fatalf("line %q of %q is not the ref's", l, got)
			}
		}
		if strings.Contains("\n"+content, " refs/heads/azero/x\n") && got == "" {
			t.Fatalf("the ref's line in %q was not found", content)
		}
	})
}
