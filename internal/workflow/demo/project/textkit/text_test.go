package textkit

import "testing"

func TestTitle(t *testing.T) {
	if got := Title("hello go world"); got != "Hello Go World" {
		t.Errorf("Title = %q", got)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("héllo wörld", 5); got != "héllo…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate = %q", got)
	}
}
