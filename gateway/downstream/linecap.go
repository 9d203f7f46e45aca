package downstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes bounds one message from a downstream server: a
// stdio line, an SSE line or a JSON body. mcp-go reads them without a
// bound, so a server could make the gateway hold any amount of memory.
const DefaultMaxLineBytes = 4 << 20

// maxGarbageLines is how many lines of non-JSON a stdio server may write
// to stdout (a stray banner, a debug print) before the gateway takes it
// for broken and restarts it. MCP allows none; a few are forgiven.
const maxGarbageLines = 16

// protocolError is a server breaking the protocol; the session ends.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func isProtocol(err error) bool {
	var p *protocolError
	return errors.As(err, &p)
}

// lineGuard sits between a child's stdout and mcp-go's reader. It hands
// over only whole lines that are JSON, each at most max bytes; a longer
// line, or more than maxGarbageLines that are not JSON, ends the stream
// with a protocolError (and mcp-go then fails every request in flight).
// Blank lines are dropped.
type lineGuard struct {
	r         *bufio.Reader
	max       int
	pending   []byte
	buf       []byte
	garbage   int
	err       error
	onGarbage func(sample []byte) // logs a dropped line
}

func newLineGuard(r io.Reader, max int, onGarbage func([]byte)) *lineGuard {
	return &lineGuard{r: bufio.NewReaderSize(r, 64<<10), max: max, onGarbage: onGarbage}
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.next()
		if err != nil {
			g.err = err
			return 0, err
		}
		body := bytes.TrimSpace(line)
		switch {
		case len(body) == 0:
		case json.Valid(body):
			g.pending = line
		default:
			g.garbage++
			if g.onGarbage != nil {
				g.onGarbage(body)
			}
			if g.garbage > maxGarbageLines {
				g.err = &protocolError{fmt.Sprintf("more than %d lines on stdout that are not JSON-RPC messages", maxGarbageLines)}
				return 0, g.err
			}
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// next reads one line with its newline, refusing one over max.
func (g *lineGuard) next() ([]byte, error) {
	g.buf = g.buf[:0]
	for {
		chunk, err := g.r.ReadSlice('\n')
		if len(g.buf)+len(chunk) > g.max+1 { // +1: the newline is not the message's
			return nil, &protocolError{fmt.Sprintf("a line on stdout is longer than %d bytes", g.max)}
		}
		g.buf = append(g.buf, chunk...)
		switch {
		case err == nil:
			return g.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// lineCap ends an HTTP response body with a protocolError when a line (an
// SSE line, or a whole JSON body without newlines) is longer than max.
type lineCap struct {
	rc      io.ReadCloser
	max     int
	run     int // bytes since the last newline
	onLimit func(error)
}

func (c *lineCap) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	for rest := p[:n]; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			c.run += len(rest)
			break
		}
		if c.run+i > c.max {
			c.run += i
			break
		}
		c.run, rest = 0, rest[i+1:]
	}
	if c.run > c.max {
		perr := &protocolError{fmt.Sprintf("a line of the HTTP response is longer than %d bytes", c.max)}
		if c.onLimit != nil {
			c.onLimit(perr)
		}
		return 0, perr
	}
	return n, err
}

func (c *lineCap) Close() error { return c.rc.Close() }
