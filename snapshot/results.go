package snapshot

import (
	"fmt"

	"github.com/ewp-go/ewp/warrant"
)

// The result types of a store's writes. Every store (the SQLite ledger,
// the JSON directory store) reports the same things, so they are defined
// once here and each store aliases them.

// PutResult says what a Put did.
type PutResult struct {
	Stored    int
	Unchanged int
	// Views has one outcome per stored or unchanged view, in input order.
	Views []Outcome
}

// Add counts one outcome.
func (r *PutResult) Add(o Outcome) {
	r.Views = append(r.Views, o)
	if o.Stored {
		r.Stored++
	} else {
		r.Unchanged++
	}
}

// Outcome is what happened to one view of a write.
type Outcome struct {
	PropositionID string
	ViewID        string
	// Stored is false for an identical re-put (a no-op).
	Stored bool
	// Seq numbers the snapshot (of the earlier identical snapshot when
	// Stored is false).
	Seq int64
	// Index is the view's position in the batch.
	Index int
}

// BatchError names the view of a batch that was refused. Err is a
// *warrant.Error for a refusal of the input or the store's own error for a
// storage failure; errors.As reaches either.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("view %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// AppendResult is the snapshot an append produced (or found).
type AppendResult struct {
	// View is the new latest snapshot, or the unchanged latest when it
	// already held the records (a retried append).
	View   *warrant.View
	Stored bool
	Seq    int64
}
