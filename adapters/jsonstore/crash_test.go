package jsonstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

const crashProps = 6

// batchViews is batch b of the crash tests: one new snapshot for each of
// crashProps propositions, each adding one evidence item.
func batchViews(b int) []*warrant.View {
	out := make([]*warrant.View, crashProps)
	for j := range out {
		js := fmt.Sprintf(`{"proposition_id": "P-%d", "view_id": "b-%d", "evidence": [{"evidence_id": "e-%d", "polarity": "supports",
			"content": "batch %d", "observed_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s-%d", "lineage_id": "L", "origin_type": "extract",
			"origin_locator": "loc", "snapshot_id": "snap", "content_hash": "h-%d", "observed_at": "2026-09-01T00:00:00Z"}}]}`, j, b, b, b, b, b)
		v, err := warrant.DecodeView([]byte(js))
		if err != nil {
			panic(err)
		}
		out[j] = v
	}
	return out
}

// batchesPresent returns how many batches the store holds, failing the
// test unless every proposition holds exactly batches 0..n-1: a batch is
// wholly present or wholly absent, and none is skipped.
func batchesPresent(t *testing.T, s *Store) int {
	t.Helper()
	n := -1
	for j := range crashProps {
		hist, err := s.History(context.Background(), fmt.Sprintf("P-%d", j))
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hist {
			if h.ViewID != fmt.Sprintf("b-%d", i) {
				t.Fatalf("P-%d: snapshot %d is %s", j, i, h.ViewID)
			}
		}
		if n >= 0 && len(hist) != n {
			t.Fatalf("a batch is half present: P-0..P-%d hold %d batches, P-%d holds %d", j-1, n, j, len(hist))
		}
		n = len(hist)
	}
	return n
}

var errCrash = errors.New("simulated crash")

// TestCrashAtEveryStep stops a commit at each of its steps, the way a
// killed process stops, and reopens the store: before the journal is
// written the batch must be absent, from then on present, and in both
// cases nothing staged may remain and Verify must pass.
func TestCrashAtEveryStep(t *testing.T) {
	steps := []string{"staged", "journal", "finished"}
	for i := range 2 * crashProps {
		steps = append(steps, fmt.Sprintf("move %d", i))
	}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			s := testStore(t)
			mustPut(t, s, batchViews(0)...)
			s.crash = func(at string) error {
				if at == step {
					return errCrash
				}
				return nil
			}
			if _, err := s.Put(context.Background(), batchViews(1)); !errors.Is(err, errCrash) {
				t.Fatalf("the crash hook did not fire at %q: %v", step, err)
			}
			re, err := Open(s.Dir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := 2
			if step == "staged" {
				want = 1
			}
			if got := batchesPresent(t, re); got != want {
				t.Fatalf("after a crash at %q the store holds %d batches, want %d", step, got, want)
			}
			assertClean(t, re)
			mustVerify(t, re)
			mustPut(t, re, batchViews(want)...) // and it takes the next batch
		})
	}
}

// A reader that meets a crashed writer's journal recovers before reading
// (writable store) or says why it cannot (read-only store).
func TestReaderMeetsJournal(t *testing.T) {
	s := testStore(t)
	mustPut(t, s, batchViews(0)...)
	s.crash = func(at string) error {
		if at == "move 1" {
			return errCrash
		}
		return nil
	}
	if _, err := s.Put(context.Background(), batchViews(1)); !errors.Is(err, errCrash) {
		t.Fatalf("Put crashed at move 1: %v, want the crash", err)
	}
	s.crash = nil
	ro, err := Open(s.Dir(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Latest(context.Background(), "P-0"); err == nil || !strings.Contains(err.Error(), "awaits recovery") {
		t.Fatalf("read-only reader over a journal: %v", err)
	}
	v, err := s.Latest(context.Background(), "P-5")
	if err != nil || v.ViewID != "b-1" {
		t.Fatalf("writable reader over a journal: %v %v", v, err)
	}
	assertClean(t, s)
}

func assertClean(t *testing.T, s *Store) {
	t.Helper()
	if s.hasJournal() {
		t.Error("a journal remains")
	}
	staged, _ := os.ReadDir(filepath.Join(s.Dir(), stagingName))
	if len(staged) != 0 {
		t.Errorf("%d staged batches remain", len(staged))
	}
}

// TestKilledWriter kills a writer process at random moments while it
// commits batch after batch, on a real disk (fsync takes time there, so
// kills land inside commits), and checks after each kill that the store
// opens, verifies, and holds whole batches only.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a few seconds")
	}
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const kills = 16
	var replayed, rolledBack, batches int
	for round := range kills {
		cmd := helper(t, "batches", dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the writer has opened the store (or died), then kill
		// it a few batches in.
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "open\n" {
			cmd.Wait()
			t.Fatalf("round %d: the writer did not open the store: %q\n%s", round, line, cmd.Stderr)
		}
		time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		switch {
		case s.hasJournal():
			replayed++
		case stagedCount(dir) > 0:
			rolledBack++
		}
		re, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("round %d: open after kill: %v\n%s", round, err, cmd.Stderr)
		}
		batches = batchesPresent(t, re)
		assertClean(t, re)
		mustVerify(t, re)
	}
	t.Logf("%d kills: %d after the commit point (journal replayed), %d before it (staged files dropped), %d between batches; %d whole batches stored",
		kills, replayed, rolledBack, kills-replayed-rolledBack, batches)
	if batches == 0 {
		t.Error("the writer never committed a batch; the test proved nothing")
	}
}

func stagedCount(dir string) int {
	entries, _ := os.ReadDir(filepath.Join(dir, stagingName))
	return len(entries)
}

// writeBatches is the helper process of TestKilledWriter: it continues the
// sequence of batches until it is killed.
func writeBatches(s *Store) error {
	hist, err := s.History(context.Background(), "P-0")
	if err != nil {
		return err
	}
	for b := len(hist); b < len(hist)+100000; b++ {
		if _, err := s.Put(context.Background(), batchViews(b)); err != nil {
			return err
		}
	}
	return nil
}
