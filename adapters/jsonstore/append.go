package jsonstore

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// AppendResult is the store-neutral append result of package snapshot.
type AppendResult = snapshot.AppendResult

// AppendEvidence stores latest + e as a new snapshot (§9 appends).
func (s *Store) AppendEvidence(ctx context.Context, propositionID string, e warrant.Evidence) (AppendResult, error) {
	return s.Append(ctx, propositionID, snapshot.Records{Evidence: []warrant.Evidence{e}})
}

// AppendCheck stores latest + c as a new snapshot.
func (s *Store) AppendCheck(ctx context.Context, propositionID string, c warrant.Check) (AppendResult, error) {
	return s.Append(ctx, propositionID, snapshot.Records{Checks: []warrant.Check{c}})
}

// Append stores latest + records as a new snapshot with a derived view id.
// Reading latest and storing the result happen under one exclusive lock,
// so of two concurrent appends (from any goroutines or processes) the
// second extends the first and neither is lost. The §10 rules are
// snapshot.Append's; the new snapshot is then checked against the
// proposition's whole history like any Put. An unknown proposition is
// warrant.CodeMissingView.
func (s *Store) Append(ctx context.Context, propositionID string, r snapshot.Records) (AppendResult, error) {
	var res AppendResult
	err := s.write(ctx, func() error {
		b := s.newBatch()
		st, err := b.prop(propositionID)
		if err != nil {
			return err
		}
		latest, err := s.latestOf(st)
		if err != nil {
			return err
		}
		if latest == nil {
			return missingProposition(propositionID)
		}
		next, err := snapshot.Append(latest, r)
		if err != nil {
			return err
		}
		if next == latest {
			res = AppendResult{View: latest, Seq: int64(len(st.snaps))}
			return nil
		}
		out, err := b.store(next)
		if err != nil {
			return err
		}
		if !out.Stored {
			return revisitedView(propositionID, next.ViewID)
		}
		res = AppendResult{View: next, Stored: true, Seq: out.Seq}
		return b.commit()
	})
	return res, err
}

// revisitedView refuses an append whose result equals an older snapshot
// that is no longer the latest. The ledger refuses the same case: storing
// nothing would leave "latest" without the record, and storing it again
// would break the snapshot's immutability.
func revisitedView(prop, viewID string) error {
	return &warrant.Error{Code: warrant.CodeImmutableRecord, Field: "view_id",
		Rule: fmt.Sprintf("the appended snapshot of %q equals the earlier snapshot %q, which is no longer the latest; put the intended view explicitly under a new view_id", prop, viewID)}
}
