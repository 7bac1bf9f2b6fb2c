package iostreams

import (
	"fmt"
	"sync"
	"time"
)

// Progress reports the advance of long work on ErrOut. On a terminal it
// rewrites one line at most every 100 ms; otherwise it prints nothing until
// Done, so logs and pipes are not flooded.
type Progress struct {
	s     *IOStreams
	label string
	now   func() time.Time

	mu      sync.Mutex
	last    time.Time
	printed bool
}

// StartProgress begins reporting work described by label.
func (s *IOStreams) StartProgress(label string) *Progress {
	return &Progress{s: s, label: label, now: time.Now}
}

// Update reports that done of total units are finished. total <= 0 means
// the total is unknown.
func (p *Progress) Update(done, total int) {
	if p == nil || !p.s.errTTY {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.now(); t.Sub(p.last) >= 100*time.Millisecond {
		p.last = t
		p.printed = true
		if total > 0 {
			fmt.Fprintf(p.s.ErrOut, "\r\x1b[K%s %d/%d", p.label, done, total)
		} else {
			fmt.Fprintf(p.s.ErrOut, "\r\x1b[K%s %d", p.label, done)
		}
	}
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.s.ErrOut, "\r\x1b[K")
		p.printed = false
	}
}
