package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// progress draws a one-line bar on stderr, only when stderr is a terminal
// (never into a log or a pipe) and only for large inputs, where a silent
// minute would look like a hang.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

// minProgressBytes is the input size from which the bar is worth drawing.
const minProgressBytes = 16 << 20

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	on := ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
	return &progress{w: w, on: on}
}

// update draws done of total bytes read (in MB).
func (p *progress) update(file, phase string, done, total int64) {
	if !p.on || total < minProgressBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond && done < total {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := width * done / total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '-'
		if int64(i) < fill {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.w, "\r%s: %-10s [%s] %d/%d MB", file, phase, bar, done>>20, total>>20)
	p.drawn = true
}

// clear erases the bar before ordinary output.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
