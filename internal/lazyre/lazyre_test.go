package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	t.Parallel()
	re := New(`^a+(b)$`)
	first := re()
	if first != re() {
		t.Error("a second call compiled the expression again")
	}
	if m := first.FindStringSubmatch("aaab"); len(m) != 2 || m[1] != "b" {
		t.Errorf("match = %q", m)
	}
	bad := New(`(`) // compiles nothing yet
	defer func() {
		if recover() == nil {
			t.Error("a bad pattern did not panic on first use")
		}
	}()
	bad()
}
