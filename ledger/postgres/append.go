package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/ledger"
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
// Latest is read under the chain lock, so of two concurrent appends (from
// any processes) the second extends the first and neither is lost.
func (l *Ledger) Append(ctx context.Context, propositionID string, r snapshot.Records) (ledger.AppendResult, error) {
	var res ledger.AppendResult
	err := l.write(ctx, func(w *wtx) error {
		// Latest and what the §9 checks need, in one round trip.
		b := &pgx.Batch{}
		b.Queue(`SELECT CASE WHEN length(body) <= $2 THEN body END, length(body), seq FROM snapshots
			WHERE proposition_id = $1 ORDER BY seq DESC LIMIT 1`, []byte(propositionID), w.maxBody)
		load := w.queueLoad(b, []string{propositionID})
		br := w.tx.SendBatch(ctx, b)
		defer br.Close()
		var body []byte
		var seq, n int64
		err := br.QueryRow().Scan(&body, &n, &seq)
		if err == nil {
			err = load(br)
		}
		if isNoRows(err) {
			return missingProposition(propositionID)
		}
		if err != nil {
			return ledgerErr("read latest", err)
		}
		if body == nil {
			return bodyLimit(propositionID, "", n, w.maxBody)
		}
		latest, err := ledger.DecodeStored(body)
		if err != nil {
			return err
		}
		next, err := snapshot.Append(latest, r)
		if err != nil {
			return err
		}
		if next == latest {
			res = ledger.AppendResult{View: latest, Seq: seq}
			return nil
		}
		if err := br.Close(); err != nil {
			return ledgerErr("read latest", err)
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
			return &warrant.Error{Code: warrant.CodeImmutableRecord, Field: "view_id",
				Rule: fmt.Sprintf("the appended snapshot of %q equals the earlier snapshot %q, which is no longer the latest; put the intended view explicitly under a new view_id", propositionID, next.ViewID)}
		}
		res = ledger.AppendResult{View: next, Stored: true, Seq: out.Seq}
		return nil
	})
	return res, err
}
