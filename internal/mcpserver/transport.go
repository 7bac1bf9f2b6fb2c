package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is `azero mcp`'s stdio transport: newline-delimited JSON-RPC
// with azero's own reader in front of the SDK's connection.
//
// The SDK's stdio connection ends the session at the first line it cannot
// read (not JSON, not JSON-RPC, over its size limit, a batch its protocol
// version refuses), so one bad message would cost the client every later
// call. Here azero reads each line first (lineReader, check): a good line
// goes on to the SDK through a pipe, a bad one gets its JSON-RPC 2.0 error
// from azero and the session goes on. Only the end of In ends it. On the
// way out, the SDK's error answers get a JSON-RPC code and words without Go
// internals (answer).
type Transport struct {
	In  io.Reader
	Out io.Writer
	// MaxMessage is the longest line read; 0 means MaxMessageBytes.
	MaxMessage int
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxMessage
	if limit <= 0 {
		limit = MaxMessageBytes
	}
	out := &lineWriter{w: t.Out}
	pr, pw := io.Pipe()
	// azero's reader bounds every line and hands on whole, valid ones only,
	// so the SDK's own bound would only add a way to end the session.
	inner, err := (&mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &conn{inner: inner, out: out, calls: map[jsonrpc.ID]string{}, batches: map[jsonrpc.ID]*batch{}}
	go c.readLines(newLineReader(t.In, limit), pw)
	return c, nil
}

// lineWriter writes whole lines, one at a time: the SDK's answers and
// azero's own share stdout.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lineWriter) writeLine(p []byte) error {
	_, err := w.Write(append(p, '\n'))
	return err
}

// Close leaves stdout open: it is not the server's to close.
func (w *lineWriter) Close() error { return nil }

// conn is the SDK's connection with azero's answers around it.
type conn struct {
	inner mcp.Connection
	out   *lineWriter

	mu      sync.Mutex
	calls   map[jsonrpc.ID]string // unanswered requests: their methods
	batches map[jsonrpc.ID]*batch // unanswered requests of a batch: their batch
	version string                // the negotiated protocol version
}

// readLines reads In line by line until its end, answering the bad lines
// and forwarding the good ones to the SDK.
func (c *conn) readLines(lr *lineReader, pw *io.PipeWriter) {
	for {
		line, err := lr.next()
		var v verdict
		var long *lineTooLongError
		switch {
		case errors.As(err, &long):
			v = replyOne(long.id, jsonrpc.CodeInvalidRequest, tooLongMessage(long.limit))
		case err != nil:
			pw.CloseWithError(err) // io.EOF: the client is gone, the SDK ends the session
			return
		default:
			v = check(line, c)
		}
		if v.reply != nil {
			if err := c.out.writeLine(v.reply); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		c.mu.Lock()
		var b *batch
		if v.batch && len(v.calls) > 0 {
			b = &batch{slot: map[jsonrpc.ID]int{}, answers: make([]json.RawMessage, len(v.calls))}
		}
		for i, cl := range v.calls {
			c.calls[cl.id] = cl.method
			if b != nil {
				b.slot[cl.id] = i
				c.batches[cl.id] = b
			}
		}
		c.mu.Unlock()
		for _, msg := range v.forward {
			// msg is a piece of the reader's buffer, which is not read
			// again before the next line: the newline may go after it.
			if _, err := pw.Write(append(msg, '\n')); err != nil {
				return // the session is closed
			}
		}
	}
}

// batch gathers the answers to the requests of one batch, in their order.
type batch struct {
	slot    map[jsonrpc.ID]int
	answers []json.RawMessage
	left    int
}

// protocol implements session.
func (c *conn) protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// inFlight implements session.
func (c *conn) inFlight(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.calls[id]
	return ok
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.inner.Read(ctx)
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || ctx.Err() != nil {
			return msg, err
		}
		// Something check let through and the SDK refused after all (none
		// is known): answer it and read on, rather than end the session.
		// The SDK's reading goroutine survives these; only stream errors
		// stop it, and the pipe carries none.
		if werr := c.out.writeLine((&protoError{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: the message was refused"}).encode()); werr != nil {
			return nil, werr
		}
	}
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.inner.Write(ctx, msg)
	}
	c.mu.Lock()
	method, b := c.calls[resp.ID], c.batches[resp.ID]
	delete(c.calls, resp.ID)
	delete(c.batches, resp.ID)
	c.mu.Unlock()
	switch {
	case resp.Error != nil:
		resp = &jsonrpc.Response{ID: resp.ID, Error: answer(method, resp.Error), Extra: resp.Extra}
	case method == "initialize":
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.mu.Lock()
			c.version = r.ProtocolVersion
			c.mu.Unlock()
		}
	}
	if b == nil {
		return c.inner.Write(ctx, resp)
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return err
	}
	c.mu.Lock()
	b.answers[b.slot[resp.ID]] = data
	b.left++
	done := b.left == len(b.answers)
	c.mu.Unlock()
	if !done {
		return nil
	}
	all, err := json.Marshal(b.answers)
	if err != nil {
		return err
	}
	return c.out.writeLine(all)
}

// Close implements mcp.Connection.
func (c *conn) Close() error { return c.inner.Close() }

// SessionID implements mcp.Connection.
func (c *conn) SessionID() string { return c.inner.SessionID() }
