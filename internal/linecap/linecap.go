// Package linecap reads newline-delimited messages of bounded length, for
// the stdio entrances (ewp-mcp, ewp-gateway): a line over the bound is
// skipped as it is read, never held whole, so memory does not grow with
// a line's length.
package linecap

import (
	"bufio"
	"errors"
	"io"
)

// ErrTooLong: a line longer than the bound, already skipped.
var ErrTooLong = errors.New("line too long")

// Reader reads lines of at most Max bytes.
type Reader struct {
	br  *bufio.Reader
	max int
}

// NewReader reads r in lines of at most max bytes.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its newline (a last line may lack
// one, and comes with io.EOF), or ErrTooLong once the rest of an
// over-long line was skipped.
func (l *Reader) Next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if n := len(chunk); err == nil && n > 0 {
			chunk = chunk[:n-1] // the newline
		}
		if len(line)+len(chunk) > l.max {
			return nil, l.skip(err)
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// skip discards up to and including the next newline; err is the error of
// the read that crossed the limit.
func (l *Reader) skip(err error) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.br.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return ErrTooLong
}
