package postgres_test

import (
	"errors"
	"io"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// item is a stream item from JSON text.
type item []byte

func (i item) View() (*warrant.View, error) { return warrant.DecodeView(i) }
func (i item) Size() int                    { return len(i) }

// streamOf yields items then io.EOF.
func streamOf(items []item) func() (ledger.StreamItem, error) {
	n := 0
	return func() (ledger.StreamItem, error) {
		if n == len(items) {
			return nil, io.EOF
		}
		n++
		return items[n-1], nil
	}
}

// syntheticItems is n views over more than one chunk, with a view that
// does not decode at index bad (none when bad < 0).
func syntheticItems(n, bad int) []item {
	out := make([]item, n)
	for i := range out {
		out[i] = snapshottest.SyntheticView(i/2, i%2)
		if i == bad {
			out[i] = item(`{"proposition_id": "P-bad", "evidence": [{"polarity": "sideways"}]}`)
		}
	}
	return out
}

// TestPutStream: the SQLite ledger's PutStream contract on PostgreSQL —
// outcomes in order across chunks, a refusal left out (Refused nil) or
// ending the batch with what came before it (io.EOF), and a Commit error
// writing nothing.
func TestPutStream(t *testing.T) {
	ctx := ctxT(t)
	t.Run("refusal left out", func(t *testing.T) {
		l, _ := newLedger(t)
		var stored, refused []int
		res, err := l.PutStream(ctx, ledger.Stream{Next: streamOf(syntheticItems(700, 400)),
			Refused: func(ledger.StreamItem, error) error { refused = append(refused, 1); return nil },
			Stored:  func(_ ledger.StreamItem, o ledger.Outcome) { stored = append(stored, o.Index) }})
		if err != nil || res.Stored != 699 || len(refused) != 1 || len(stored) != 699 {
			t.Fatalf("res %+v err %v: %d stored, %d refused", res, err, len(stored), len(refused))
		}
		for k := 1; k < len(stored); k++ {
			if stored[k] <= stored[k-1] {
				t.Fatalf("outcomes out of order at %d: %v", k, stored[k-1:k+1])
			}
		}
		if h, err := l.Head(ctx); err != nil || h.Seq != 699 {
			t.Fatalf("head %v %v", h, err)
		}
	})
	t.Run("refusal ends the batch", func(t *testing.T) {
		l, _ := newLedger(t)
		res, err := l.PutStream(ctx, ledger.Stream{Next: streamOf(syntheticItems(700, 300)),
			Refused: func(ledger.StreamItem, error) error { return io.EOF }})
		if err != nil || res.Stored != 300 {
			t.Fatalf("res %+v err %v, want the 300 views before the refusal", res, err)
		}
	})
	t.Run("commit error writes nothing", func(t *testing.T) {
		l, _ := newLedger(t)
		stop := errors.New("stop")
		_, err := l.PutStream(ctx, ledger.Stream{Next: streamOf(syntheticItems(300, -1)), Commit: func() error { return stop }})
		if !errors.Is(err, stop) {
			t.Fatalf("err %v", err)
		}
		if h, err := l.Head(ctx); err != nil || h.Seq != 0 {
			t.Fatalf("head %v %v, want nothing written", h, err)
		}
	})
	t.Run("refusal without Refused aborts", func(t *testing.T) {
		l, _ := newLedger(t)
		_, err := l.PutStream(ctx, ledger.Stream{Next: streamOf(syntheticItems(10, 5))})
		var be *ledger.BatchError
		if !errors.As(err, &be) || be.Index != 5 {
			t.Fatalf("err %v, want a BatchError at 5", err)
		}
	})
}
