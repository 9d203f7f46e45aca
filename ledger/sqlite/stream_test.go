package sqlite_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// streamItem is a view's text, decoded on PutStream's workers.
type streamItem struct{ raw []byte }

func (s streamItem) View() (*warrant.View, error) { return warrant.DecodeView(s.raw) }
func (s streamItem) Size() int                    { return len(s.raw) }

// source streams the given texts, then io.EOF.
func source(raws ...[]byte) func() (ledger.StreamItem, error) {
	i := 0
	return func() (ledger.StreamItem, error) {
		if i == len(raws) {
			return nil, io.EOF
		}
		i++
		return streamItem{raws[i-1]}, nil
	}
}

func syntheticRaws(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = snapshottest.SyntheticView(i/4, i%4)
	}
	return out
}

func countSnapshots(t *testing.T, l *sqlite.Ledger) int64 {
	t.Helper()
	h, err := l.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h.Seq
}

// PutStream stores a stream larger than its look-ahead in order, passing
// each outcome to Stored and collecting none.
func TestPutStreamStoresInOrder(t *testing.T) {
	l := newLedger(t)
	raws := syntheticRaws(3000)
	var seen []int
	res, err := l.PutStream(context.Background(), ledger.Stream{Next: source(raws...),
		Stored: func(_ ledger.StreamItem, o ledger.Outcome) { seen = append(seen, o.Index) }})
	if err != nil || res.Stored != 3000 || res.Views != nil || len(seen) != 3000 {
		t.Fatalf("stored %d (views %d, seen %d): %v", res.Stored, len(res.Views), len(seen), err)
	}
	for i, x := range seen {
		if x != i {
			t.Fatalf("outcome %d has index %d", i, x)
		}
	}
	if n := countSnapshots(t, l); n != 3000 {
		t.Fatalf("%d events", n)
	}
}

// A refused view is left out when Refused returns nil, ends the batch
// (earlier views written) on io.EOF, and aborts it otherwise or without
// Refused.
func TestPutStreamRefusals(t *testing.T) {
	good := syntheticRaws(6)
	changed := []byte(strings.Replace(string(good[0]), "log line 0", "log line X", 1)) // same ids, other content
	bad := []byte(`{"proposition_id": 3}`)
	in := [][]byte{good[0], good[1], bad, good[2], changed, good[3]}
	cases := []struct {
		name    string
		refused func(ledger.StreamItem, error) error
		stored  int64
		wantErr bool
	}{
		{"skip", func(ledger.StreamItem, error) error { return nil }, 4, false},
		{"stop", func(ledger.StreamItem, error) error { return io.EOF }, 2, false},
		{"abort", func(_ ledger.StreamItem, err error) error { return err }, 0, true},
		{"no callback", nil, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			var codes []string
			refused := c.refused
			if refused != nil {
				refused = func(it ledger.StreamItem, err error) error {
					var we *warrant.Error
					if errors.As(err, &we) {
						codes = append(codes, we.Code)
					}
					return c.refused(it, err)
				}
			}
			_, err := l.PutStream(context.Background(), ledger.Stream{Next: source(in...), Refused: refused})
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v", err)
			}
			if n := countSnapshots(t, l); n != c.stored {
				t.Errorf("%d stored, want %d", n, c.stored)
			}
			if c.name == "skip" && (len(codes) != 2 || codes[0] != warrant.CodeInvalidView || codes[1] != warrant.CodeImmutableRecord) {
				t.Errorf("refusals %v", codes)
			}
			var be *ledger.BatchError
			if c.name == "no callback" && (!errors.As(err, &be) || be.Index != 2) {
				t.Errorf("want a BatchError at index 2, got %v", err)
			}
		})
	}
}

// An error from Next aborts the batch; PutStream returns it as is.
func TestPutStreamNextError(t *testing.T) {
	l := newLedger(t)
	boom := errors.New("boom")
	n := 0
	_, err := l.PutStream(context.Background(), ledger.Stream{Next: func() (ledger.StreamItem, error) {
		if n++; n > 100 {
			return nil, boom
		}
		return streamItem{snapshottestView(n)}, nil
	}})
	if !errors.Is(err, boom) || countSnapshots(t, l) != 0 {
		t.Fatalf("err %v", err)
	}
}

func snapshottestView(i int) []byte { return snapshottest.SyntheticView(i, 0) }

// Commit decides at the end: its error aborts the whole batch.
func TestPutStreamCommitHook(t *testing.T) {
	for _, abort := range []bool{false, true} {
		l := newLedger(t)
		veto := errors.New("veto")
		_, err := l.PutStream(context.Background(), ledger.Stream{Next: source(syntheticRaws(700)...), Commit: func() error {
			if abort {
				return veto
			}
			return nil
		}})
		want := map[bool]int64{false: 700, true: 0}[abort]
		if n := countSnapshots(t, l); n != want || (abort != errors.Is(err, veto)) {
			t.Errorf("abort=%v: %d stored, err %v", abort, n, err)
		}
	}
}
