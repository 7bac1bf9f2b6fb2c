package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestReadLineKeepsTypedAheadInput(t *testing.T) {
	t.Parallel()
	s, in, _, _ := Test()
	in.WriteString("first\r\nsecond\nthird")
	for _, want := range []string{"first", "second", "third"} {
		got, err := s.ReadLine(context.Background())
		if err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := s.ReadLine(context.Background()); !errors.Is(err, ErrEOF) {
		t.Fatalf("at the end: %v, want ErrEOF", err)
	}
}

func TestReadLineCancelledKeepsTheLineForTheNextCaller(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	s := &IOStreams{In: r, Out: io.Discard, ErrOut: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := s.ReadLine(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
	go w.Write([]byte("late answer\n"))
	got, err := s.ReadLine(context.Background())
	if err != nil || got != "late answer" {
		t.Fatalf("next read = %q, %v", got, err)
	}
}

func TestColorAndPrompting(t *testing.T) {
	t.Parallel()
	s, _, _, _ := Test()
	if s.CanPrompt() || s.ColorEnabled() {
		t.Fatal("buffers can prompt or colour")
	}
	if got := s.ColorScheme().Red("x"); got != "x" {
		t.Errorf("colour without a terminal: %q", got)
	}
	s.SetTTY(true, false, true)
	s.SetColor(true)
	if !s.CanPrompt() || !s.ColorEnabled() || s.ColorOutEnabled() {
		t.Error("terminal flags")
	}
	if got := s.ColorScheme().Red("x"); !strings.Contains(got, "\x1b[") || !strings.Contains(got, "x") {
		t.Errorf("colour on a terminal: %q", got)
	}
	s.SetTTY(false, false, true)
	if s.CanPrompt() {
		t.Error("a prompt without a terminal on stdin")
	}
	env := map[string]string{"NO_COLOR": "1"}
	sys := System(func(k string) string { return env[k] })
	if sys.noColor != true {
		t.Error("NO_COLOR ignored")
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	s, _, _, errOut := Test()
	p := s.StartProgress("Analysing")
	p.Update(1, 10)
	p.Done()
	if errOut.Len() != 0 {
		t.Errorf("progress without a terminal: %q", errOut.String())
	}
	s.SetTTY(false, false, true)
	p = s.StartProgress("Analysing")
	p.Update(3, 10)
	p.Done()
	if got := errOut.String(); !strings.Contains(got, "Analysing 3/10") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress = %q", got)
	}
}

func TestHangUpIsEndOfInput(t *testing.T) {
	t.Parallel()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	s := &IOStreams{In: tty, Out: io.Discard, ErrOut: io.Discard}
	master.Close() // the terminal goes away: reads fail with EIO
	if _, err := s.ReadLine(context.Background()); !errors.Is(err, ErrEOF) {
		t.Fatalf("after a hang-up: %v, want ErrEOF", err)
	}
}

// emptyReader never has anything, yet never says so.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReadLineFromAReaderThatNeverDelivers(t *testing.T) {
	t.Parallel()
	s := &IOStreams{In: emptyReader{}, Out: io.Discard, ErrOut: io.Discard}
	if _, err := s.ReadLine(t.Context()); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("ReadLine = %v, want io.ErrNoProgress", err)
	}
}

func TestColorConventions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		tty, want bool
	}{
		{"a terminal", nil, true, true},
		{"a pipe", nil, false, false},
		{"NO_COLOR on a terminal", map[string]string{"NO_COLOR": "1"}, true, false},
		{"NO_COLOR empty means unset", map[string]string{"NO_COLOR": ""}, true, true},
		{"CLICOLOR=0", map[string]string{"CLICOLOR": "0"}, true, false},
		{"CLICOLOR=1 on a pipe", map[string]string{"CLICOLOR": "1"}, false, false},
		{"CLICOLOR_FORCE on a pipe", map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"CLICOLOR_FORCE=0", map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{"CLICOLOR_FORCE over CLICOLOR=0", map[string]string{"CLICOLOR": "0", "CLICOLOR_FORCE": "1"}, false, true},
		{"NO_COLOR wins over CLICOLOR_FORCE", map[string]string{"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, true, false},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, _, _ := Test()
			s.noColor, s.forceColor = colorPolicy(func(k string) string { return tt.env[k] })
			s.SetTTY(tt.tty, tt.tty, tt.tty)
			if s.ColorEnabled() != tt.want || s.ColorOutEnabled() != tt.want {
				t.Errorf("colour on stderr %v, stdout %v; want %v", s.ColorEnabled(), s.ColorOutEnabled(), tt.want)
			}
		})
	}
}

func TestPagerOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		tty   bool
		pager string
		env   []string
		want  string
	}{
		{"a terminal goes through the pager, with LESS=FRX", true, `printf '[%s]' "$LESS"; tr a-z A-Z`, []string{}, "[FRX]LONG TEXT\n"},
		{"the user's LESS is kept", true, `printf '[%s]' "$LESS"; cat`, []string{"LESS=-R"}, "[-R]long text\n"},
		{"piped output is never paged", false, `tr a-z A-Z`, nil, "long text\n"},
		{"no pager", true, "", nil, "long text\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, out, _ := Test()
			s.SetTTY(false, tt.tty, false)
			s.SetPager(tt.pager, tt.env)
			stop := s.StartPager()
			fmt.Fprintln(s.Out, "long text")
			stop()
			if out.String() != tt.want {
				t.Errorf("output %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestPagerCommand(t *testing.T) {
	t.Parallel()
	less := func(string) (string, error) { return "/usr/bin/less", nil }
	none := func(string) (string, error) { return "", errors.New("not found") }
	for _, tt := range []struct {
		env  map[string]string
		look func(string) (string, error)
		want string
	}{
		{map[string]string{"AZERO_PAGER": "most", "PAGER": "more"}, less, "most"},
		{map[string]string{"PAGER": "more"}, less, "more"},
		{map[string]string{"PAGER": "cat"}, less, ""},
		{nil, less, "less"},
		{nil, none, ""},
	} {
		if got := PagerCommand(func(k string) string { return tt.env[k] }, tt.look); got != tt.want {
			t.Errorf("PagerCommand(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestColorSchemeSequences: each line is wrapped in its own SGR sequence
// and reset, tabs and empty lines are kept; off, text passes unchanged.
func TestColorSchemeSequences(t *testing.T) {
	t.Parallel()
	on := ColorScheme{on: true}
	tests := []struct {
		name, got, want string
	}{
		{"red", on.Red("x y"), "\x1b[31mx y\x1b[m"},
		{"green, two lines", on.Green("a\nb"), "\x1b[32ma\x1b[m\n\x1b[32mb\x1b[m"},
		{"tabs kept, empty lines plain", on.Yellow("\tz\n\nw"), "\x1b[33m\tz\x1b[m\n\n\x1b[33mw\x1b[m"},
		{"cyan", on.Cyan("c"), "\x1b[36mc\x1b[m"},
		{"bold", on.Bold("b"), "\x1b[1mb\x1b[m"},
		{"faint", on.Faint("f"), "\x1b[2mf\x1b[m"},
		{"alert", on.Alert("!! WARNING "), "\x1b[1;97;41m!! WARNING \x1b[m"},
		{"empty", on.Red(""), ""},
		{"off", ColorScheme{}.Red("a\nb"), "a\nb"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestDiffLine(t *testing.T) {
	t.Parallel()
	on := ColorScheme{on: true}
	for line, want := range map[string]struct{ class, coloured string }{
		"diff --git a/x b/x": {"file", "\x1b[1mdiff --git a/x b/x\x1b[m"},
		"--- a/x":            {"file", "\x1b[1m--- a/x\x1b[m"},
		"+++ b/x":            {"file", "\x1b[1m+++ b/x\x1b[m"},
		"@@ -1,2 +1,2 @@":    {"hunk", "\x1b[36m@@ -1,2 +1,2 @@\x1b[m"},
		"+added":             {"add", "\x1b[32m+added\x1b[m"},
		"-deleted":           {"del", "\x1b[31m-deleted\x1b[m"},
		" context":           {"", " context"},
		"":                   {"", ""},
	} {
		if got := DiffLineClass(line); got != want.class {
			t.Errorf("DiffLineClass(%q) = %q, want %q", line, got, want.class)
		}
		if got := on.DiffLine(line); got != want.coloured {
			t.Errorf("DiffLine(%q) = %q, want %q", line, got, want.coloured)
		}
	}
}

// TestPagerChosenOnFirstUse: the pager is looked up only when output is
// paged, once.
func TestPagerChosenOnFirstUse(t *testing.T) {
	t.Parallel()
	looked := 0
	look := func(string) (string, error) { looked++; return "", errors.New("not found") }
	getenv := func(k string) string {
		if k == "PAGER" {
			return "tr a-z A-Z"
		}
		return ""
	}
	s, _, out, _ := Test()
	s.SetPagerFrom(getenv, look)
	s.StartPager()()
	if looked != 0 {
		t.Errorf("piped output: the pager was looked up %d times", looked)
	}
	s.SetTTY(false, true, false)
	for range 2 {
		stop := s.StartPager()
		fmt.Fprintln(s.Out, "paged")
		stop()
	}
	if out.String() != "PAGED\nPAGED\n" {
		t.Errorf("output %q, want both lines through $PAGER", out.String())
	}
	s.SetPagerFrom(func(string) string { return "" }, look)
	s.StartPager()()
	s.StartPager()()
	if looked != 1 {
		t.Errorf("less was looked up %d times for two pages, want once", looked)
	}
}
