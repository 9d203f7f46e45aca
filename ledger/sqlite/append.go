package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// AppendEvidence stores latest + e as a new snapshot (§9 appends).
func (l *Ledger) AppendEvidence(ctx context.Context, propositionID string, e warrant.Evidence) (ledger.AppendResult, error) {
	return l.Append(ctx, propositionID, snapshot.Records{Evidence: []warrant.Evidence{e}})
}

// AppendCheck stores latest + c as a new snapshot.
func (l *Ledger) AppendCheck(ctx context.Context, propositionID string, c warrant.Check) (ledger.AppendResult, error) {
	return l.Append(ctx, propositionID, snapshot.Records{Checks: []warrant.Check{c}})
}

// Append stores latest + records as a new snapshot with a derived view id.
// Reading latest and storing the result happen in one IMMEDIATE
// transaction, so of two concurrent appends the second extends the first
// and neither is lost. The §10 rules (required content_hash and
// observed_at, SourceRef defaults, no assumed polarity) are
// snapshot.Append's; an unknown proposition is CodeMissingView.
func (l *Ledger) Append(ctx context.Context, propositionID string, r snapshot.Records) (ledger.AppendResult, error) {
	var res ledger.AppendResult
	err := l.write(ctx, func(w *wtx) error {
		latest, err := w.latest(propositionID)
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
			res = ledger.AppendResult{View: latest}
			return w.tx.QueryRowContext(ctx, `SELECT MAX(seq) FROM snapshots WHERE proposition_id = ?`, propositionID).Scan(&res.Seq)
		}
		p, err := prepare(next, w.maxBody)
		if err != nil {
			return err
		}
		out, err := w.store(p)
		if err != nil {
			return err
		}
		if !out.Stored {
			return revisitedView(propositionID, next.ViewID)
		}
		res = ledger.AppendResult{View: next, Stored: true, Seq: out.Seq}
		return nil
	})
	return res, err
}

// revisitedView refuses an append whose result equals an older, non-latest
// snapshot: storing nothing would leave "latest" without the record, and
// storing it again would break the snapshot's immutability.
func revisitedView(prop, viewID string) error {
	return &warrant.Error{Code: warrant.CodeImmutableRecord, Field: "view_id",
		Rule: fmt.Sprintf("the appended snapshot of %q equals the earlier snapshot %q, which is no longer the latest; put the intended view explicitly under a new view_id", prop, viewID)}
}

// latest reads the proposition's latest snapshot inside the write
// transaction; nil when the proposition is unknown.
func (w *wtx) latest(prop string) (*warrant.View, error) {
	var body []byte
	err := w.st.latest.QueryRowContext(w.ctx, prop, w.maxBody).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, ledgerErr("read latest", err)
	}
	if n, over := oversized(body); over {
		return nil, bodyLimit(prop, "", n, w.maxBody)
	}
	return ledger.DecodeStored(body)
}

// decoders keeps warrant.Decoders for Verify, which decodes every stored
// body and reports the kernel's own refusal (reads use ledger.DecodeStored).
var decoders = sync.Pool{New: func() any { return new(warrant.Decoder) }}
