package web

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

// The listener has at most n connections open: the next is accepted when
// one closes, and none once the listener is closed.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitListener(ln, 2)
	for range 4 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(); err != nil {
		t.Fatal(err)
	}
	type accepted struct {
		c   net.Conn
		err error
	}
	next := make(chan accepted, 1)
	go func() {
		c, err := l.Accept()
		next <- accepted{c, err}
	}()
	if held := len(l.(*limited).slots); held != 2 {
		t.Fatalf("%d slots held by two connections", held)
	}
	select {
	case a := <-next:
		t.Fatalf("a third connection was accepted with two open: %v", a.err)
	default:
	}
	// Closing twice frees one slot.
	first.Close()
	first.Close()
	select {
	case a := <-next:
		if a.err != nil {
			t.Fatal(a.err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("no connection accepted after one closed")
	}
	go func() {
		c, err := l.Accept()
		next <- accepted{c, err}
	}()
	l.Close()
	select {
	case a := <-next:
		if !errors.Is(a.err, net.ErrClosed) {
			t.Fatalf("Accept on a closed listener: %v", a.err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("Accept still waits after Close")
	}
}
