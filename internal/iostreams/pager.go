package iostreams

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// PagerCommand is the pager long output goes through on a terminal:
// $AZERO_PAGER, else $PAGER, else less when installed; "" (or "cat") is
// none.
func PagerCommand(getenv func(string) string, lookPath func(string) (string, error)) string {
	for _, v := range []string{"AZERO_PAGER", "PAGER"} {
		if p, ok := lookup(getenv, v); ok {
			p = strings.TrimSpace(p)
			if p == "cat" {
				return ""
			}
			return p
		}
	}
	if _, err := lookPath("less"); err == nil {
		return "less"
	}
	return ""
}

// SetPager sets the pager command StartPager runs (see PagerCommand), and
// the environment it runs in.
func (s *IOStreams) SetPager(cmd string, environ []string) {
	s.pager, s.pagerEnv, s.pagerFrom = cmd, environ, nil
}

// SetPagerFrom has StartPager choose the pager with PagerCommand the
// first time output is paged: a command whose output is not paged looks
// nothing up.
func (s *IOStreams) SetPagerFrom(getenv func(string) string, lookPath func(string) (string, error)) {
	s.pager, s.pagerEnv = "", nil
	s.pagerFrom = func() string { return PagerCommand(getenv, lookPath) }
}

// StartPager sends what is written to Out through the pager until the
// returned function is called, which waits for the pager to end. It does
// nothing when Out is not a terminal (piped output is never paged) or no
// pager is set. less gets LESS=FRX unless LESS is set: it quits when the
// text fits on one screen, keeps colours, and leaves the text on screen.
func (s *IOStreams) StartPager() (stop func()) {
	nop := func() {}
	if !s.outTTY {
		return nop
	}
	if s.pagerFrom != nil {
		s.pager, s.pagerFrom = s.pagerFrom(), nil
	}
	if s.pager == "" {
		return nop
	}
	cmd := exec.Command("sh", "-c", s.pager)
	env := s.pagerEnv
	if env == nil {
		env = os.Environ()
	}
	if !hasVar(env, "LESS") {
		env = append(env, "LESS=FRX")
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = s.Out, s.ErrOut
	in, err := cmd.StdinPipe()
	if err != nil {
		return nop
	}
	if err := cmd.Start(); err != nil {
		return nop
	}
	out := s.Out
	s.Out = &pagerWriter{w: in}
	return func() {
		in.Close()
		_ = cmd.Wait()
		s.Out = out
	}
}

// pagerWriter ignores the pager quitting early (q in less): the rest of
// the output is simply not shown.
type pagerWriter struct{ w io.Writer }

func (p *pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return len(b), nil
	}
	return n, err
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
