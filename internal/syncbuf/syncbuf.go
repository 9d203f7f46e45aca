// Package syncbuf is a bytes.Buffer for tests where one goroutine writes
// (a process's stdout or stderr, a logger) while the test reads.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for one writer and concurrent readers; its zero value
// is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len is how many bytes were written so far.
func (s *Buffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}
