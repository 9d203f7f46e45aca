package postgres_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
)

const recorderEnv = "EWP_AUDIT_PG_RECORDER"

// recorderChild, in a child started by the kill test, records decisions
// from 16 goroutines and prints each id once Record has returned (as a
// replica answers only then), until it is killed.
func recorderChild() bool {
	url := os.Getenv(recorderEnv)
	if url == "" {
		return false
	}
	l, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				d := audittest.BenchDecision(g*1_000_000 + i)
				if err := l.Record(ctx, d); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, d.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return true
}

// TestKillKeepsEveryReturnedRecord kills a recording replica with SIGKILL
// mid-work, three times over one database: every decision_id it printed
// after Record returned is in the log, and the chain verifies (a batch
// in flight at the kill is rolled back whole by the server).
func TestKillKeepsEveryReturnedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process kill test")
	}
	url := newDB(t)
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), recorderEnv+"="+url)
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
		killAt := 300 + 137*round
		for sc.Scan() {
			ids = append(ids, sc.Text())
			if len(ids) == killAt {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		cmd.Wait()
		if len(ids) < killAt {
			t.Fatalf("round %d: the recorder printed %d ids and stopped: %s", round, len(ids), errb.String())
		}
		if last := ids[len(ids)-1]; len(last) != 36 {
			ids = ids[:len(ids)-1]
		}
		l := openLog(t, url, postgres.Options{ReadOnly: true})
		for _, id := range ids {
			if _, err := l.Decision(ctx, id); err != nil {
				t.Fatalf("round %d: decision %s was returned before the kill but is not in the log: %v", round, id, err)
			}
		}
		rep := audittest.MustVerify(t, l)
		t.Logf("round %d: killed after %d returned records; the log holds %d, chain intact (head %s)", round, len(ids), rep.Decisions, rep.Head)
		l.Close()
	}
}
