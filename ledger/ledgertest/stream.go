package ledgertest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// item is a stream item decoding a synthetic view, or refusing to.
type item struct {
	i   int
	bad bool
}

func (it item) View() (*warrant.View, error) {
	if it.bad {
		return nil, &warrant.Error{Code: warrant.CodeInvalidView, Field: "view", Rule: "a refused test item"}
	}
	return warrant.DecodeView(snapshottest.SyntheticView(it.i/3, it.i%3))
}

func (it item) Size() int { return 2000 }

// source streams n items, the ones in bad refused by their View.
func source(n int, bad map[int]bool) func() (ledger.StreamItem, error) {
	i := 0
	return func() (ledger.StreamItem, error) {
		if i == n {
			return nil, io.EOF
		}
		i++
		return item{i - 1, bad[i-1]}, nil
	}
}

// testPutStream: a stream of unknown length is one all-or-nothing batch;
// refusals go to Refused, which may leave the view out, end the batch
// there or abort it; outcomes go to Stored in order.
func testPutStream(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	const n = 700
	var stored []int
	var refused []int
	res, err := l.PutStream(ctx, ledger.Stream{
		Next:    source(n, map[int]bool{10: true, 500: true}),
		Refused: func(it ledger.StreamItem, err error) error { refused = append(refused, it.(item).i); return nil },
		Stored:  func(it ledger.StreamItem, o ledger.Outcome) { stored = append(stored, o.Index) },
	})
	if err != nil || res.Stored != n-2 || len(stored) != n-2 || len(refused) != 2 || refused[1] != 500 {
		t.Fatalf("stream with two refusals left out: %+v %v, %d stored, refused %v", res, err, len(stored), refused)
	}
	for k, idx := range stored {
		if k > 0 && idx <= stored[k-1] {
			t.Fatalf("outcomes out of order at %d", k)
		}
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Snapshots != n-2 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// io.EOF from Refused ends the batch there; what came before is kept.
	l2 := Open(t, fresh(t), false)
	res, err = l2.PutStream(ctx, ledger.Stream{
		Next:    source(n, map[int]bool{300: true}),
		Refused: func(ledger.StreamItem, error) error { return io.EOF },
	})
	if err != nil || res.Stored != 300 {
		t.Fatalf("ended at the refusal: %+v %v", res, err)
	}
	// Without Refused a refusal aborts the batch: nothing is written.
	l3 := Open(t, fresh(t), false)
	_, err = l3.PutStream(ctx, ledger.Stream{Next: source(n, map[int]bool{650: true})})
	var be *ledger.BatchError
	if !errors.As(err, &be) || be.Index != 650 {
		t.Fatalf("want BatchError at 650, got %v", err)
	}
	// A §9 refusal by the store, and Commit deciding against the batch.
	_, err = l3.PutStream(ctx, ledger.Stream{Next: source(5, nil), Commit: func() error { return errors.New("changed my mind") }})
	if err == nil || !strings.Contains(err.Error(), "changed my mind") {
		t.Fatalf("commit refusal: %v", err)
	}
	// An error of Next other than io.EOF aborts the batch as it is.
	next := source(n, nil)
	calls := 0
	_, err = l3.PutStream(ctx, ledger.Stream{Next: func() (ledger.StreamItem, error) {
		if calls++; calls == 400 {
			return nil, errors.New("input broke")
		}
		return next()
	}})
	if err == nil || err.Error() != "input broke" {
		t.Fatalf("Next's error: %v", err)
	}
	if rep, err := l3.Verify(ctx); err != nil || rep.Events != 0 {
		t.Fatalf("aborted streams wrote: %+v %v", rep, err)
	}
}
