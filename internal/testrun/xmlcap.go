package testrun

import (
	"bufio"
	"io"
)

// maxXMLRun is the most of one run of character data, attribute value,
// CDATA section or comment a JUnit report is read with: far more than a
// Result keeps of a message, far less than a test's whole output.
const maxXMLRun = 64 << 10

// xmlCap passes an XML document on with every run of character data,
// attribute value, CDATA section and comment cut to at most max bytes, so
// that an XML decoder, which holds a whole token in memory, holds at most
// that much of a test's output however large the report (a test printing
// in a loop fills its <system-out> with hundreds of megabytes). A run is
// cut on a character boundary, never inside an entity reference, and
// never so that a comment ends in "-"; markup (names, the delimiters,
// processing instructions and directives) passes unchanged, so a document
// the decoder reads reads the same but for the cut runs.
type xmlCap struct {
	in  *bufio.Reader
	max int
	out []byte // bytes processed and not yet read
	err error  // of the input, once out is drained

	state    xmlState
	run      int  // bytes of the current run passed on
	dropping bool // the current run is being cut
	rune     bool // inside a multi-byte character that is passed on
	entity   int  // > 0: inside an entity reference passed on, its length
	quote    byte // of the attribute value or the directive's string
	depth    int  // of '<' inside a directive
	prev     byte // the byte before, inside a processing instruction
	dash     bool // a '-' of a comment held back
}

type xmlState int

const (
	xmlText xmlState = iota
	xmlTag
	xmlComment
	xmlCDATA
	xmlPI
	xmlDirective
)

func newXMLCap(r io.Reader, max int) *xmlCap {
	return &xmlCap{in: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (x *xmlCap) Read(p []byte) (int, error) {
	for len(x.out) == 0 && x.err == nil {
		x.fill(len(p))
	}
	if len(x.out) > 0 {
		n := copy(p, x.out)
		x.out = x.out[n:]
		return n, nil
	}
	return 0, x.err
}

// fill processes input until about n bytes are ready or the input ends.
func (x *xmlCap) fill(n int) {
	x.out = x.out[:0]
	for len(x.out) < n {
		c, err := x.in.ReadByte()
		if err != nil {
			if x.dash { // a document cut short inside a comment
				x.out = append(x.out, '-')
				x.dash = false
			}
			x.err = err
			return
		}
		x.step(c)
	}
}

// begin starts a new run.
func (x *xmlCap) begin(s xmlState) {
	x.state, x.run, x.dropping, x.rune, x.entity, x.dash = s, 0, false, false, 0, false
}

// next reports whether the input continues with s, without reading it.
func (x *xmlCap) next(s string) bool {
	b, _ := x.in.Peek(len(s))
	return string(b) == s
}

// skip passes on the next n bytes of input as they are.
func (x *xmlCap) skip(n int) {
	b, _ := x.in.Peek(n)
	x.out = append(x.out, b...)
	_, _ = x.in.Discard(len(b))
}

func (x *xmlCap) step(c byte) {
	switch x.state {
	case xmlText:
		if c == '<' {
			x.out = append(x.out, c)
			switch {
			case x.next("!--"):
				x.skip(3)
				x.begin(xmlComment)
			case x.next("![CDATA["):
				x.skip(8)
				x.begin(xmlCDATA)
			case x.next("!"):
				x.skip(1)
				x.begin(xmlDirective)
				x.quote, x.depth = 0, 0
			case x.next("?"):
				x.skip(1)
				x.begin(xmlPI)
				x.prev = 0
			default:
				x.begin(xmlTag)
				x.quote = 0
			}
			return
		}
		x.content(c, true, false)
	case xmlTag:
		switch {
		case x.quote != 0 && c == x.quote:
			x.quote = 0
			x.out = append(x.out, c)
		case x.quote != 0:
			x.content(c, true, false)
		case c == '"' || c == '\'':
			x.out = append(x.out, c)
			x.begin(xmlTag)
			x.quote = c
		case c == '>':
			x.out = append(x.out, c)
			x.begin(xmlText)
		default:
			x.out = append(x.out, c)
		}
	case xmlComment:
		if c == '-' && x.next("->") {
			if x.dash { // a comment that ends in '-', which the decoder refuses
				x.out = append(x.out, '-')
			}
			x.out = append(x.out, c)
			x.skip(2)
			x.begin(xmlText)
			return
		}
		x.content(c, false, true)
	case xmlCDATA:
		if c == ']' && x.next("]>") {
			x.out = append(x.out, c)
			x.skip(2)
			x.begin(xmlText)
			return
		}
		x.content(c, false, false)
	case xmlPI:
		x.out = append(x.out, c)
		if x.prev == '?' && c == '>' {
			x.begin(xmlText)
			return
		}
		x.prev = c
	case xmlDirective:
		x.directive(c)
	}
}

// directive follows a directive (<!DOCTYPE ...>) to its end as the
// decoder does: quoted strings, nested angle brackets, comments inside.
func (x *xmlCap) directive(c byte) {
	x.out = append(x.out, c)
	switch {
	case x.quote != 0:
		if c == x.quote {
			x.quote = 0
		}
	case c == '\'' || c == '"':
		x.quote = c
	case c == '>':
		if x.depth == 0 {
			x.begin(xmlText)
			return
		}
		x.depth--
	case c == '<':
		if !x.next("!--") {
			x.depth++
			return
		}
		// A comment: up to its "-->", whatever it holds.
		x.skip(3)
		var b0, b1 byte
		for {
			b, err := x.in.ReadByte()
			if err != nil {
				return
			}
			x.out = append(x.out, b)
			if b0 == '-' && b1 == '-' && b == '>' {
				return
			}
			b0, b1 = b1, b
		}
	}
}

// content passes on or drops one byte of a run. entities: the run may hold
// entity references; comment: a '-' is held back until the byte after it
// is passed on, as a comment cut after a '-' would end in "--->".
func (x *xmlCap) content(c byte, entities, comment bool) {
	continuation := c&0xC0 == 0x80
	keep := !x.dropping && (x.run < x.max || (continuation && x.rune) || x.entity > 0)
	if !keep {
		x.dropping, x.dash = true, false
		return
	}
	if x.dash {
		x.out = append(x.out, '-')
		x.dash = false
	}
	x.run++
	x.rune = c >= 0xC0 || (continuation && x.rune)
	if comment && c == '-' {
		x.dash = true
		return
	}
	x.out = append(x.out, c)
	switch {
	case !entities:
	case c == '&':
		x.entity = 1
	case x.entity > 0 && (c == ';' || !entityByte(c) || x.entity >= 32):
		x.entity = 0
	case x.entity > 0:
		x.entity++
	}
}

// entityByte reports whether c may be part of an entity reference's name.
func entityByte(c byte) bool {
	return c == '#' || c == '_' || c == '-' || c == '.' || c == ':' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}
