package sqlite_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// TestMain lets TestKillKeepsEveryReturnedRecord run this test binary as
// a recording child process, and TestUpgradeCrashLeavesV1 as an upgrading
// one.
func TestMain(m *testing.M) {
	if path := os.Getenv("EWP_AUDIT_RECORDER"); path != "" {
		recordForever(path)
		return
	}
	if path := os.Getenv("EWP_AUDIT_UPGRADE_CRASH"); path != "" {
		crashMidUpgrade(path)
		return
	}
	os.Exit(m.Run())
}

// recordForever records decisions from 16 goroutines and prints each id
// once Record has returned, as the server sends a decision_id only after
// Record: whatever the parent reads was promised durable.
func recordForever(path string) {
	l, err := sqlite.OpenOrCreate(path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				d := audittest.BenchDecision(g*1_000_000 + i)
				if err := l.Record(ctx, d); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				fmt.Fprintln(os.Stdout, d.ID)
			}
		})
	}
	wg.Wait()
}

// TestKillKeepsEveryReturnedRecord kills a recording process with SIGKILL
// in the middle of its work: every decision_id it printed (after Record
// returned) is in the log afterwards, and the chain verifies.
func TestKillKeepsEveryReturnedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process kill test")
	}
	path := filepath.Join(t.TempDir(), "ewp.db.audit")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "EWP_AUDIT_RECORDER="+path)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it after a few hundred ids, at a different moment each round.
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
		// A line cut by the kill is not an id the client received.
		if last := ids[len(ids)-1]; len(last) != 36 {
			ids = ids[:len(ids)-1]
		}
		l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if _, err := l.Decision(ctx, id); err != nil {
				t.Fatalf("round %d: decision %s was returned before the kill but is not in the log: %v", round, id, err)
			}
		}
		rep, err := l.Verify(ctx)
		l.Close()
		if err != nil {
			t.Fatalf("round %d: verify after kill -9: %v", round, err)
		}
		t.Logf("round %d: killed after %d returned records; the log holds %d, chain intact (head %s)", round, len(ids), rep.Decisions, rep.Head)
		time.Sleep(10 * time.Millisecond)
	}
}
