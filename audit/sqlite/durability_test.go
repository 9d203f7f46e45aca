package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// TestMain lets TestKillKeepsEveryReturnedRecord run this test binary as
// a recording child process.
func TestMain(m *testing.M) {
	if path := os.Getenv("EWP_AUDIT_RECORDER"); path != "" {
		recordForever(path)
		return
	}
	os.Exit(m.Run())
}

// recordForever is the child of TestKillKeepsEveryReturnedRecord.
func recordForever(path string) {
	l, err := sqlite.OpenOrCreate(path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	audittest.RecordUntilKilled(l)
	os.Exit(1)
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
		// Killed after a few hundred ids, at a different moment each round.
		ids := audittest.KillRecorder(t, "EWP_AUDIT_RECORDER="+path, 300+137*round)
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
