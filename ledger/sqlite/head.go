package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Head returns the chain's last event; Seq 0 and Hash "" for a ledger with
// no events.
func (l *Ledger) Head(ctx context.Context) (ledger.Head, error) {
	var h ledger.Head
	var sum []byte
	err := l.queryRow(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Head{}, nil
	}
	if err != nil {
		return ledger.Head{}, ledgerErr("read chain head", err)
	}
	h.Hash = hex.EncodeToString(sum)
	return h, nil
}

// VerifyHead checks that the ledger holds exactly the event h names: the
// event at sequence h.Seq exists and has hash h.Hash. Run after [Verify]
// (which proves the chain up to its end), it proves that the history a
// pipeline saw when it kept h is still the ledger's prefix: a cut-off tail
// (h.Seq beyond the end) or a rewritten history (another hash) is a
// *ledger.Break. A ledger may have grown since; that is not a break.
func (l *Ledger) VerifyHead(ctx context.Context, h ledger.Head) error {
	if h.Seq == 0 {
		return nil // the empty chain is every ledger's prefix
	}
	var sum []byte
	err := l.r.QueryRowContext(ctx, `SELECT hash FROM events WHERE seq = ?`, h.Seq).Scan(&sum)
	if errors.Is(err, sql.ErrNoRows) {
		last, err := l.Head(ctx)
		if err != nil {
			return err
		}
		return &ledger.Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s names event %d, but the ledger ends at event %d: history was cut off (or --db is another ledger)", h, h.Seq, last.Seq)}
	}
	if err != nil {
		return ledgerErr("read chain head", err)
	}
	if got := hex.EncodeToString(sum); got != strings.ToLower(h.Hash) {
		return &ledger.Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s does not match: event %d has hash %s, so the history up to it was rewritten (or --db is another ledger)", h, h.Seq, got)}
	}
	return nil
}
