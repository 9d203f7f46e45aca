package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

// Bounds of list --watch's --interval: often enough to notice a request
// within a coffee, rarely enough not to load a shared log.
const (
	defaultWatchInterval = 5 * time.Second
	minWatchInterval     = time.Second
	maxWatchInterval     = time.Hour
)

// watchInput is what list --watch reads for end of input (Ctrl-D at a
// terminal); a variable so the tests can hand it a pipe.
var watchInput io.Reader = os.Stdin

// checkWatch refuses a --watch the listing cannot honour.
func checkWatch(pending, asJSON bool, every time.Duration) error {
	switch {
	case !pending:
		return errors.New("--watch follows the inbox: give --pending too")
	case asJSON:
		return errors.New("--watch redraws for a person; for a script, run list --pending --json now and then")
	case every < minWatchInterval || every > maxWatchInterval:
		return fmt.Errorf("--interval %v: want %v to %v", every, minWatchInterval, maxWatchInterval)
	}
	return nil
}

// watch runs once every interval until Ctrl-C, end of input or e.ctx
// ends; once prints one listing and returns its exit code, and a failing
// one ends the watch with it. At a terminal the screen is cleared before
// each listing (the only control sequence written: everything from the
// log is escaped, as in every listing).
func watch(e *env, every time.Duration, once func() int) int {
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := watchInput
	go func() { // end of input ends the watch (the reader outlives it until then)
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	clear := isTerminal(e.stdout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if clear {
			fmt.Fprint(e.stdout, "\x1b[H\x1b[2J")
		}
		fmt.Fprintf(e.stdout, "pending decisions at %s (every %v; Ctrl-C or Ctrl-D stops)\n", e.now().UTC().Format(time.RFC3339), every)
		if code := once(); code != exitOK {
			return code
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-tick.C:
		}
	}
}

// isTerminal is whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
