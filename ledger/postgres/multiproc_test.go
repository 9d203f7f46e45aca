package postgres_test

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger/ledgertest"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

const (
	helperURL   = "EWP_PG_HELPER_URL"
	helperID    = "EWP_PG_HELPER_ID"
	helperCount = 20
)

// TestHelperWriter is the body of the writer processes of
// TestManyProcessesOneChain; run alone it does nothing.
func TestHelperWriter(t *testing.T) {
	url := os.Getenv(helperURL)
	if url == "" {
		t.Skip("helper process: run by TestManyProcessesOneChain")
	}
	id, _ := strconv.Atoi(os.Getenv(helperID))
	l, err := postgres.Open(context.Background(), url, postgres.Options{Settings: pgurl.Settings{PoolSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := writeShare(l, fmt.Sprintf("p%d", id), 100+id); err != nil {
		t.Fatal(err)
	}
}

// writeShare is one writer's work: appends to the shared proposition
// interleaved with batches of new propositions of its own.
func writeShare(l *postgres.Ledger, name string, propBase int) error {
	ctx := context.Background()
	for i := range helperCount {
		e := warrant.Evidence{EvidenceID: fmt.Sprintf("e-%s-%d", name, i), Polarity: warrant.Supports, Content: "c",
			ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}
		if _, err := l.AppendEvidence(ctx, "P-db", e); err != nil {
			return fmt.Errorf("%s append %d: %w", name, i, err)
		}
		if i%5 == 0 {
			v, err := warrant.DecodeView(snapshottest.SyntheticView(propBase*1000+i, 0))
			if err != nil {
				return err
			}
			if _, err := l.Put(ctx, []*warrant.View{v}); err != nil {
				return fmt.Errorf("%s put %d: %w", name, i, err)
			}
		}
	}
	return nil
}

// TestManyProcessesOneChain: three writer processes (standing in for
// machines) and two writers in this process append to one proposition and
// store views of their own at once. No append is lost, the chain does not
// fork, and it verifies.
func TestManyProcessesOneChain(t *testing.T) {
	l, url := newLedger(t)
	base, _ := warrant.DecodeView([]byte(ledgertest.ViewP))
	if _, err := l.Put(ctxT(t), []*warrant.View{base}); err != nil {
		t.Fatal(err)
	}
	const procs, local = 3, 2
	var wg sync.WaitGroup
	errs := make(chan error, procs+local)
	for p := range procs {
		cmd := osexec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperURL+"="+url, helperID+"="+strconv.Itoa(p))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer process %d: %v\n%s", p, err, out)
			}
		})
	}
	for g := range local {
		w, err := postgres.Open(ctxT(t), url, postgres.Options{Settings: pgurl.Settings{PoolSize: 2}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		wg.Go(func() {
			if err := writeShare(w, fmt.Sprintf("g%d", g), 200+g); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	writers := procs + local
	latest, err := l.Latest(ctxT(t), "P-db")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(latest.Evidence), 1+writers*helperCount; got != want {
		t.Fatalf("latest holds %d evidence items, want %d: an append was lost", got, want)
	}
	rep, err := l.Verify(ctxT(t))
	wantEvents := int64(1 + writers*helperCount + writers*helperCount/5)
	if err != nil || rep.Events != wantEvents || rep.Snapshots != wantEvents {
		t.Fatalf("verify: %+v %v (want %d events)", rep, err, wantEvents)
	}
	if h, _ := l.Head(ctxT(t)); h.Seq != wantEvents {
		t.Fatalf("head %v, want seq %d", h, wantEvents)
	}
}
