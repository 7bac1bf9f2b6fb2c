package testrun_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// Issue 12: a log far over the displayed 256 KiB, with the one failing
// test in its middle. The runner's own report is read as a stream, so the
// failure is a red (not "error") and its message reaches the end of the
// output, where readers and prompts look.
func TestLargeLogs(t *testing.T) {
	t.Parallel()
	goMod := "module example.com/big\n\ngo 1.22\n"
	goTests := `package big

import (
	"strings"
	"testing"
)

var line = strings.Repeat("x", 80)

// 2,500 output events, about 250 KiB of JSON, before and after the failure.
func TestBefore(t *testing.T) {
	for i := 0; i < 2500; i++ {
		t.Log(i, line)
	}
}

func TestMiddle(t *testing.T) {
	t.Errorf("the middle failed: want %d, got %d", 4, 5)
}

func TestAfter(t *testing.T) {
	for i := 0; i < 2500; i++ {
		t.Log(i, line)
	}
}
`
	pyTests := `import pytest

@pytest.mark.parametrize("i", range(3000))
def test_many(i):
    if i == 1500:
        print("y" * 300_000)
        # Only the full report shows the differing item: pytest's one-line
        # summary at the end does not.
        assert {"a": 1, "b": 2} == {"a": 1, "b": 3}

def test_last():
    print("z" * 1000)
`
	tests := []struct {
		name    string
		kind    string
		tool    string
		files   map[string]string
		failed  []string
		message string
	}{
		{"go test -json", "go", "go", map[string]string{"go.mod": goMod, "big_test.go": goTests},
			[]string{"example.com/big.TestMiddle"}, "the middle failed: want 4, got 5"},
		{"pytest", "pytest", "pytest", map[string]string{"test_big.py": pyTests},
			[]string{"test_big.py::test_many[1500]"}, "{'b': 2} != {'b': 3}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testenv.RequireTool(t, tt.tool)
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			r, err := testrun.New(tt.kind, sandboxed(t, testrun.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != testrun.Fail || !slices.Equal(res.FailedTests, tt.failed) {
				t.Fatalf("outcome %s failed %q, want fail %q (%s)", res.Outcome, res.FailedTests, tt.failed, res.Summary)
			}
			if !strings.Contains(res.Output, "bytes of output omitted") {
				t.Fatalf("the output (%d bytes) was not long enough to be cut: the fixture tests nothing", len(res.Output))
			}
			if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, tt.message) {
				t.Errorf("failures %+v lack %q", res.Failures, tt.message)
			}
			tail := res.Output[max(0, len(res.Output)-4000):]
			if !strings.Contains(tail, tt.message) {
				t.Errorf("the end of the output lacks %q:\n%s", tt.message, tail)
			}
		})
	}
}
