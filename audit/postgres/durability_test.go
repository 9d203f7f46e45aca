package postgres_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
)

const recorderEnv = "EWP_AUDIT_PG_RECORDER"

// recorderChild, in a child started by the kill test, records until it
// is killed (audittest.RecordUntilKilled), as a replica would.
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
	audittest.RecordUntilKilled(l)
	os.Exit(1)
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
		ids := audittest.KillRecorder(t, recorderEnv+"="+url, 300+137*round)
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
