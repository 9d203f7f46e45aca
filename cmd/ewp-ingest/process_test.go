package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// buildBinary compiles ewp-ingest into the test's temp dir: the crash and
// concurrency tests need real processes, which a SIGKILL can stop between
// any two instructions.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping tests that build and run ewp-ingest processes")
	}
	bin := filepath.Join(t.TempDir(), "ewp-ingest")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syntheticFile writes n synthetic views (as JSON Lines) for propositions
// whose ids start with prefix, and returns the path.
func syntheticFile(t *testing.T, dir, name, prefix string, n int) string {
	t.Helper()
	data := bytes.ReplaceAll(snapshottest.SyntheticLines(n, 4), []byte(`"P-`), []byte(`"`+prefix))
	return writeFile(t, dir, name, string(data))
}

// countPrefix counts the snapshots of propositions with the given id
// prefix, inside one read transaction.
func countPrefix(t *testing.T, db *sql.DB, prefix string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM snapshots WHERE proposition_id >= ? AND proposition_id < ?`, prefix, prefix+"\xff").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func verifyLedger(t *testing.T, path string) {
	t.Helper()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("ledger does not open after the kill: %v", err)
	}
	defer l.Close()
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatalf("verify after the kill: %v", err)
	}
}

// TestKilledIngestLeavesWholeOrNothing SIGKILLs ewp-ingest at several
// points of a large load. Afterwards the ledger must open and verify, and
// the file must be wholly present or wholly absent; a re-run completes it.
// SQLite only: it is about the ledger file a killed writer leaves; a
// PostgreSQL transaction cut off by a dead client is the server's to roll
// back, all or nothing.
func TestKilledIngestLeavesWholeOrNothing(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	const n = 20_000
	big := syntheticFile(t, dir, "big.jsonl", "P-big-", n)
	base := writeFile(t, dir, "base.json", view("P-base", "v1", "extract"))
	full := timeLoad(t, bin, filepath.Join(dir, "timing.db"), base, big)
	t.Logf("a full load of %d views takes %v", n, full)
	outcomes := map[string]int{}
	for i, frac := range []float64{0.2, 0.5, 0.8, 0.9, 0.97} {
		db := filepath.Join(dir, fmt.Sprintf("kill-%d.db", i))
		if out, err := exec.Command(bin, "--db", db, "--quiet", base).CombinedOutput(); err != nil {
			t.Fatalf("base load: %v %s", err, out)
		}
		cmd := exec.Command(bin, "--db", db, "--attest-trusted-origins", "--quiet", big)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(frac * float64(full)))
		cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have finished
		state, _ := cmd.Process.Wait()
		verifyLedger(t, db)
		got := countPrefix(t, openRaw(t, db), "P-big-")
		if got != 0 && got != n {
			t.Fatalf("killed at %.0f%%: %d of %d views present", 100*frac, got, n)
		}
		if countPrefix(t, openRaw(t, db), "P-base") != 1 {
			t.Fatal("the earlier load was damaged")
		}
		outcomes[fmt.Sprintf("killed=%v present=%v", !state.Success(), got == n)]++
		if out, err := exec.Command(bin, "--db", db, "--attest-trusted-origins", "--quiet", big).CombinedOutput(); err != nil {
			t.Fatalf("re-run after the kill: %v %s", err, out)
		}
		if got := countPrefix(t, openRaw(t, db), "P-big-"); got != n {
			t.Fatalf("re-run stored %d of %d", got, n)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["killed=true present=false"] == 0 {
		t.Error("no kill landed before the commit: the test did not exercise a crash mid-load")
	}
}

func timeLoad(t *testing.T, bin, db string, files ...string) time.Duration {
	t.Helper()
	start := time.Now()
	args := append([]string{"--db", db, "--attest-trusted-origins", "--quiet"}, files...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("timing load: %v %s", err, out)
	}
	return time.Since(start)
}

// TestConcurrentProcessesAndReaders runs two ewp-ingest processes, each
// loading several files, while this process appends to a shared
// proposition and readers poll. Every file and every append must land,
// and a reader must never see part of a file: each file's propositions
// are counted inside one read transaction and must be 0 or all.
// SQLite only: it is about several processes sharing one file (its locks
// and WAL); ledger/postgres's TestManyProcessesOneChain covers several
// writers on one server.
func TestConcurrentProcessesAndReaders(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "shared.db")
	if out, err := exec.Command(bin, "--db", db, "--quiet", writeFile(t, dir, "seed.json", view("P-shared", "v1", "extract"))).CombinedOutput(); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	const files, per = 4, 400
	var wg sync.WaitGroup
	for _, proc := range []string{"A", "B"} {
		var paths []string
		for f := range files {
			paths = append(paths, syntheticFile(t, dir, fmt.Sprintf("%s%d.jsonl", proc, f), fmt.Sprintf("P-%s%d-", proc, f), per))
		}
		wg.Go(func() {
			for _, p := range paths { // one invocation per file: one transaction each
				if out, err := exec.Command(bin, "--db", db, "--attest-trusted-origins", "--quiet", p).CombinedOutput(); err != nil {
					t.Errorf("process %s, %s: %v %s", proc, p, err, out)
				}
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for range 3 {
		rg.Go(func() { pollWholeFiles(t, db, files, per, stop) })
	}
	appended := appendWhileLoading(t, db, 30)
	wg.Wait()
	close(stop)
	rg.Wait()
	raw := openRaw(t, db)
	for _, proc := range []string{"A", "B"} {
		for f := range files {
			if got := countPrefix(t, raw, fmt.Sprintf("P-%s%d-", proc, f)); got != per {
				t.Errorf("file %s%d: %d of %d views stored", proc, f, got, per)
			}
		}
	}
	l, err := sqlite.Open(db, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	latest, err := l.Latest(context.Background(), "P-shared")
	if err != nil || len(latest.Evidence) != 1+appended {
		t.Fatalf("P-shared latest has %d evidence items, want %d (%v)", len(latest.Evidence), 1+appended, err)
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// appendWhileLoading appends n evidence items to P-shared and returns n.
func appendWhileLoading(t *testing.T, db string, n int) int {
	t.Helper()
	l, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		e := warrant.Evidence{EvidenceID: fmt.Sprintf("e-append-%d", i), Polarity: warrant.Supports, Content: "c",
			ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}
		if _, err := l.AppendEvidence(context.Background(), "P-shared", e); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

func pollWholeFiles(t *testing.T, path string, files, per int, stop <-chan struct{}) {
	db := openRaw(t, path)
	for {
		select {
		case <-stop:
			return
		default:
		}
		tx, err := db.Begin()
		if err != nil {
			t.Error(err)
			return
		}
		for _, proc := range []string{"A", "B"} {
			for f := range files {
				var got int
				prefix := fmt.Sprintf("P-%s%d-", proc, f)
				if err := tx.QueryRow(`SELECT count(*) FROM snapshots WHERE proposition_id >= ? AND proposition_id < ?`, prefix, prefix+"\xff").Scan(&got); err != nil {
					t.Error(err)
				} else if got != 0 && got != per {
					t.Errorf("a reader saw %d of %d views of file %s%d", got, per, proc, f)
				}
			}
		}
		tx.Rollback() //nolint:errcheck // read-only
	}
}
