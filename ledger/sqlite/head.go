package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Head names the last event of the hash chain: its sequence number and
// hash. A pipeline that keeps the heads its ingests reported can later
// prove, with VerifyHead, that nothing was cut off the end of the chain,
// which no check from inside the file alone can see.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"` // lower-case hex sha256; "" for an empty ledger
}

// String is the form ewp-ingest prints and `verify --head` takes: SEQ:HASH.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ParseHead reads SEQ:HASH.
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 0 {
		return Head{}, fmt.Errorf("chain head %q: want SEQ:HASH, e.g. 42:9f86d08…, as ewp-ingest printed it", s)
	}
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return Head{}, fmt.Errorf("chain head %q: the hash must be 64 hex digits (a sha256)", s)
	}
	return Head{Seq: n, Hash: strings.ToLower(hash)}, nil
}

// Head returns the chain's last event; Seq 0 and Hash "" for a ledger with
// no events.
func (l *Ledger) Head(ctx context.Context) (Head, error) {
	var h Head
	var sum []byte
	err := l.queryRow(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return Head{}, nil
	}
	if err != nil {
		return Head{}, ledgerErr("read chain head", err)
	}
	h.Hash = hex.EncodeToString(sum)
	return h, nil
}

// VerifyHead checks that the ledger holds exactly the event h names: the
// event at sequence h.Seq exists and has hash h.Hash. Run after [Verify]
// (which proves the chain up to its end), it proves that the history a
// pipeline saw when it kept h is still the ledger's prefix: a cut-off tail
// (h.Seq beyond the end) or a rewritten history (another hash) is a
// *Break. A ledger may have grown since; that is not a break.
func (l *Ledger) VerifyHead(ctx context.Context, h Head) error {
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
		return &Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s names event %d, but the ledger ends at event %d: history was cut off (or --db is another ledger)", h, h.Seq, last.Seq)}
	}
	if err != nil {
		return ledgerErr("read chain head", err)
	}
	if got := hex.EncodeToString(sum); got != strings.ToLower(h.Hash) {
		return &Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s does not match: event %d has hash %s, so the history up to it was rewritten (or --db is another ledger)", h, h.Seq, got)}
	}
	return nil
}
