package jsonstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/warrant"
)

const concProp = "P-concurrent"

func seedConcurrent(t testing.TB, s *Store) {
	t.Helper()
	mustPut(t, s, mustView(t, `{"proposition_id": "`+concProp+`", "view_id": "v0"}`))
}

func evidence(id string) warrant.Evidence {
	return warrant.Evidence{EvidenceID: id, Polarity: warrant.Supports, Content: "content of " + id,
		ObservedAt: "2026-09-01T00:00:00Z",
		Source:     warrant.SourceRef{ContentHash: "sha256:" + id, ObservedAt: "2026-09-01T00:00:00Z"}}
}

// appendMany appends n evidence items named <prefix>-<i> from g goroutines.
func appendMany(s *Store, prefix string, g, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for w := range g {
		wg.Go(func() {
			for i := w; i < n; i += g {
				if _, err := s.AppendEvidence(context.Background(), concProp, evidence(fmt.Sprintf("%s-%d", prefix, i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// wantAll checks that latest holds every appended item and that the
// history has one snapshot per append.
func wantAll(t *testing.T, s *Store, prefixes []string, n int) {
	t.Helper()
	latest, err := s.Latest(context.Background(), concProp)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range latest.Evidence {
		have[e.EvidenceID] = true
	}
	for _, p := range prefixes {
		for i := range n {
			if id := fmt.Sprintf("%s-%d", p, i); !have[id] {
				t.Errorf("lost append %s", id)
			}
		}
	}
	hist, err := s.History(context.Background(), concProp)
	if err != nil || len(hist) != 1+len(prefixes)*n {
		t.Errorf("history has %d snapshots, want %d (%v)", len(hist), 1+len(prefixes)*n, err)
	}
	mustVerify(t, s)
}

func TestConcurrentAppendsGoroutines(t *testing.T) {
	s := testStore(t)
	seedConcurrent(t, s)
	if err := appendMany(s, "g", 8, 120); err != nil {
		t.Fatal(err)
	}
	wantAll(t, s, []string{"g"}, 120)
}

// Two processes, each with several goroutines and its own *Store, append
// to one proposition; the flock is all that orders them.
func TestConcurrentAppendsProcesses(t *testing.T) {
	s := testStore(t)
	seedConcurrent(t, s)
	const n = 60
	prefixes := []string{"proc0", "proc1"}
	cmds := make([]*exec.Cmd, len(prefixes))
	for i, p := range prefixes {
		cmds[i] = helper(t, "append", s.Dir(), p, strconv.Itoa(n))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	// This process appends too, in the same time window.
	if err := appendMany(s, "parent", 4, n); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, c.Stderr)
		}
	}
	wantAll(t, s, append(prefixes, "parent"), n)
}

// helper runs this test binary as a helper process (see TestHelperProcess).
func helper(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "EWP_JSONSTORE_HELPER=1")
	cmd.Args = append(cmd.Args, append([]string{"--"}, args...)...)
	cmd.Stderr = &syncbuf.Buffer{}
	return cmd
}

// TestHelperProcess is not a test: it is the body of the helper processes
// that the concurrency and crash tests start.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("EWP_JSONSTORE_HELPER") != "1" {
		t.Skip("helper process: run by the concurrency tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	if err := runHelper(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func runHelper(args []string) error {
	s, err := Open(args[1], Options{})
	if err != nil {
		return err
	}
	switch args[0] {
	case "append":
		n, _ := strconv.Atoi(args[3])
		return appendMany(s, args[2], 3, n)
	case "batches":
		// The parent times its kill from this line, not from the start of
		// a process that a busy machine may take long to schedule.
		fmt.Println("open")
		return writeBatches(s)
	}
	return fmt.Errorf("unknown helper role %q", args[0])
}
