package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

func waitFor(t *testing.T, out *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the watch's output:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startWatch runs list --pending --watch in process on db's log, reading
// end of input from a pipe; it returns the output, the pipe's writer and
// the exit code's channel.
func startWatch(t *testing.T, ctx context.Context, db string) (*syncbuf.Buffer, *io.PipeWriter, chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	prev := watchInput
	watchInput = pr
	t.Cleanup(func() { watchInput = prev; pw.Close() })
	out, errb := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"list", "--pending", "--watch", "--interval", "1s", "--db", db}, out, errb)
	}()
	return out, pw, done
}

func exitWithin(t *testing.T, done chan int, what string) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(5 * time.Second):
		t.Fatalf("the watch did not stop on %s", what)
	}
	return -1
}

// TestListPendingWatch: --watch lists the inbox again every --interval, so
// a decision recorded while it runs appears; what an agent wrote is
// escaped (no control sequence reaches the terminal, and none is written
// to a non-terminal); it stops when its context ends (Ctrl-C) or its
// input does (Ctrl-D), exit 0.
func TestListPendingWatch(t *testing.T) {
	first := pending("P-first", 1)
	first.ActionID = "act-1\x1b]0;pwned\x07"
	db, _ := seeded(t, first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, _, done := startWatch(t, ctx, db)
	waitFor(t, out, `act-1\x1b]0;pwned\x07`)

	l, err := sqlite.Open(sqlite.DefaultPath(db), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), pending("P-second", 2)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	waitFor(t, out, "act-2")
	cancel()
	if code := exitWithin(t, done, "its context's end"); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if got := out.String(); strings.Count(got, "pending decisions at") < 2 || strings.ContainsRune(got, '\x1b') {
		t.Fatalf("output:\n%q", got)
	}

	out, pw, done := startWatch(t, context.Background(), db)
	waitFor(t, out, "act-2")
	pw.Close()
	if code := exitWithin(t, done, "end of input"); code != exitOK {
		t.Fatalf("exit %d", code)
	}
}

func TestListWatchRefusals(t *testing.T) {
	db, _ := seeded(t, pending("P", 1))
	for args, want := range map[string]string{
		"--watch":                           "give --pending too",
		"--pending --watch --interval 10ms": "want 1s to 1h0m0s",
		"--pending --watch --interval 2h":   "want 1s to 1h0m0s",
		"--pending --watch --json":          "--json",
	} {
		_, errs := wantExit(t, exitUsage, append(append([]string{"list"}, strings.Fields(args)...), "--db", db)...)
		if !strings.Contains(errs, want) {
			t.Errorf("list %s: %q, want %q", args, errs, want)
		}
	}
}
