package testrun

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

type goTest struct{ opts Options }

func (g *goTest) Name() string { return KindGo }

func (g *goTest) command() ([]string, error) {
	if g.opts.TestCmd != "" {
		return shellCommand(g.opts.TestCmd), nil
	}
	goBin, err := g.opts.LookPath("go")
	if err != nil {
		return nil, err
	}
	// -count=1: a result from the test cache is not a run of the tests.
	return []string{goBin, "test", "-json", "-count=1", "./..."}, nil
}

func (g *goTest) Run(ctx context.Context, dir string) (Result, error) {
	argv, err := g.command()
	if err != nil {
		return Result{}, err
	}
	out := &display{}
	stream := newGoStream(out)
	witness := newGoWitness()
	stdout := newLineWriter(func(line []byte) { stream.line(line); witness.line(line) })
	stderr := newLineWriter(func(line []byte) {
		out.Write(append(line, '\n'))
		stream.stderrLine(string(line))
	})
	inv, err := g.opts.start(dir)
	if err != nil {
		return Result{}, err
	}
	defer inv.Close()
	settings, err := inv.buildCaches("go")
	if err != nil {
		return Result{}, err
	}
	x, err := execute(ctx, inv, argv, settings, g.opts.Timeout, stdout, stderr)
	if err != nil {
		return Result{}, err
	}
	stdout.Close()
	stderr.Close()
	if isBaseline(ctx) {
		inv.promoteBuildCaches("go")
	}
	v := stream.verdict(x)
	crossCheck(&v, witness.witness(g.opts.TestCmd == ""))
	return v.result(g.Name(), argv, x, out), nil
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

// goStream reads `go test -json` one line at a time while the tests run,
// so nothing but the displayed text depends on the length of the log.
type goStream struct {
	text    io.Writer
	t       tally
	events  int
	built   bool // a build failed
	running map[string]*tailBuffer
	stderr  []string
	// Without -json (a custom command), go's text lines.
	textFail, textBuild, textOK bool
}

func newGoStream(text io.Writer) *goStream {
	return &goStream{text: text, running: map[string]*tailBuffer{}}
}

var (
	textFailRe  = lazyre.New(`^\s*--- FAIL: (\S+)`)
	textPassRe  = lazyre.New(`^\s*--- PASS: `)
	compileLine = lazyre.New(`^\S+\.go:\d+(:\d+)?: `)
)

func (g *goStream) line(line []byte) {
	var ev testEvent
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
		g.text.Write(append(line, '\n'))
		g.textLine(string(line))
		return
	}
	g.events++
	switch ev.Action {
	case "build-output":
		io.WriteString(g.text, ev.Output)
		for l := range strings.SplitSeq(strings.TrimRight(ev.Output, "\n"), "\n") {
			if !strings.HasPrefix(l, "# ") {
				g.t.errorLine(l)
			}
		}
	case "build-fail":
		g.built = true
	case "output":
		io.WriteString(g.text, ev.Output)
		if ev.Test != "" {
			g.buffer(ev.Package, ev.Test).WriteString(ev.Output)
		} else if strings.Contains(ev.Output, "[build failed]") || strings.Contains(ev.Output, "[setup failed]") {
			g.built = true
		}
	case "pass", "skip", "fail":
		if ev.FailedBuild != "" {
			g.built = true
		}
		if ev.Test == "" {
			return
		}
		key := ev.Package + "." + ev.Test
		buf := g.running[ev.Package+"\x00"+ev.Test]
		delete(g.running, ev.Package+"\x00"+ev.Test)
		switch ev.Action {
		case "pass":
			g.t.record(key, passed, "")
		case "skip":
			g.t.record(key, skipped, "")
		case "fail":
			msg := ""
			if buf != nil {
				msg = buf.String()
			}
			g.t.record(key, failed, msg)
		}
	}
}

// textLine reads go's plain output, for a custom command without -json.
func (g *goStream) textLine(l string) {
	switch {
	case textFailRe().MatchString(l):
		g.textFail = true
		if g.events == 0 {
			g.t.record(textFailRe().FindStringSubmatch(l)[1], failed, "")
		}
	case textPassRe().MatchString(l):
		if g.events == 0 {
			g.t.record("", passed, "")
		}
	case strings.Contains(l, "[build failed]"), strings.Contains(l, "[setup failed]"):
		g.textBuild = true
	case strings.HasPrefix(l, "ok  \t"):
		g.textOK = true
	case compileLine().MatchString(l):
		g.t.errorLine(l)
	}
}

func (g *goStream) stderrLine(l string) {
	if len(g.stderr) < maxErrorLines && strings.TrimSpace(l) != "" {
		g.stderr = append(g.stderr, l)
	}
}

func (g *goStream) buffer(pkg, test string) *tailBuffer {
	k := pkg + "\x00" + test
	b := g.running[k]
	if b == nil {
		b = &tailBuffer{max: 8 << 10}
		g.running[k] = b
	}
	return b
}

// verdict decides from the event stream; the exit code alone cannot tell
// a failing test from a package that does not compile.
func (g *goStream) verdict(x execResult) verdict {
	v := verdict{tally: g.t, exitCode: x.exitCode, timedOut: x.timedOut}
	if g.built || (g.events == 0 && g.textBuild) {
		v.broken = true
	}
	if g.events == 0 && x.exitCode == 0 && v.passed == 0 && v.failed == 0 && g.textOK {
		v.passed = 1 // a custom command without -json or -v that succeeded
	}
	// go's own errors (no module, a package that cannot be found) come on
	// stderr, with no events.
	if (v.broken || x.exitCode != 0) && len(v.errors) == 0 {
		for _, l := range g.stderr {
			v.errorLine(l)
		}
	}
	if x.exitCode != 0 && v.failed == 0 && !v.broken && g.events == 0 {
		stderr := strings.Join(g.stderr, "\n")
		switch {
		case strings.Contains(stderr, "no Go files"), strings.Contains(stderr, "matched no packages"), strings.Contains(stderr, "no packages to test"):
			// A module without packages yet has no tests, not broken ones.
			v.exitCode = 0
		case len(g.stderr) > 0:
			// `go test` could not start: no module, a missing package, bad flags.
			v.unusable = true
		}
	}
	return v
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	b   []byte
	max int
	cut bool
}

func (t *tailBuffer) WriteString(s string) {
	t.b = append(t.b, s...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
}

func (t *tailBuffer) String() string {
	b := t.b
	if len(b) > t.max {
		b, t.cut = b[len(b)-t.max:], true
	}
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		return "…\n" + string(b)
	}
	return string(b)
}
