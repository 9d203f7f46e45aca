package audittest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ewp-go/ewp/audit"
)

// The two halves of a store's kill test, which both stores run: a child
// process (the test binary itself, started with an environment variable
// its TestMain looks for) records until it is killed, and the parent
// checks that every decision_id the child printed is in the log.

// RecordUntilKilled is the child's half: it records decisions from 16
// goroutines, MAY_ACT and REQUIRE_CONFIRMATION in turn (in the SQLite log
// the first need no decisions row, the second each have one), and prints
// each id once Record has returned, as the server sends a decision_id only
// then: whatever the parent reads was promised durable. It returns only
// if recording fails, after printing why to stderr.
func RecordUntilKilled(l audit.Log) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				d := BenchAllowed(g*1_000_000 + i)
				if i%2 == 1 {
					d = BenchDecision(g*1_000_000 + i)
				}
				if err := l.Record(context.Background(), d); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, d.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// KillRecorder is the parent's half: it starts this test binary with env
// (KEY=VALUE) added, reads the ids it prints, kills it with SIGKILL once
// it has printed killAt, and returns every id it printed, less a last line
// the kill cut short (not an id a client received).
func KillRecorder(t testing.TB, env string, killAt int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var ids []string
	for sc.Scan() {
		ids = append(ids, sc.Text())
		if len(ids) == killAt {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd.Wait() //nolint:errcheck // killed on purpose
	if len(ids) < killAt {
		t.Fatalf("the recorder printed %d ids and stopped: %s", len(ids), errb.String())
	}
	if last := ids[len(ids)-1]; len(last) != 36 {
		ids = ids[:len(ids)-1]
	}
	return ids
}
