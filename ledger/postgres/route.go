package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// ReadRouter splits an ewp-mcp replica's reads between the primary and a
// streaming-replication standby under one rule: a decision to act
// (may_act, and the stale-view check of every gate call) never rests on
// a snapshot older than the primary's latest. A standby replays the
// primary's WAL some time after the commit — milliseconds normally,
// without bound when replay is paused, the standby is busy or the network
// slow — so a snapshot an ingest committed, which may withdraw the very
// evidence an action rests on, can be missing there. The action path
// therefore always reads the primary; reads that may be a moment old
// (list_propositions, history, search, the concept graph) may come from
// the standby.
//
// Reading the primary is also the cheaper way to be sure: asking whether
// the standby has caught up (its pg_last_wal_replay_lsn against the
// primary's WAL position) costs a round trip to the primary anyway,
// and then a second one to the standby; the latest snapshot of one
// proposition is a single index lookup on the primary.
//
// Single-use approvals are consumed on the primary too (the decision log,
// audit/postgres, lives there; a standby refuses writes).
type ReadRouter struct {
	primary, standby *Ledger
	maxLag           int64
}

// RouteOptions tune the read path.
type RouteOptions struct {
	// MaxLag, when positive, sends a read to the primary whenever the
	// standby's replay is more than MaxLag bytes of WAL behind (measured
	// per read: two small queries). Give it kilobytes at least: an idle
	// primary's insert position can sit a page header (24 bytes) past
	// the last record. Zero: reads take the standby whatever its lag.
	MaxLag int64
}

// NewReadRouter routes between primary and standby (opened read-only on
// the standby's URL); a nil standby sends everything to the primary.
func NewReadRouter(primary, standby *Ledger, opt RouteOptions) *ReadRouter {
	return &ReadRouter{primary: primary, standby: standby, maxLag: opt.MaxLag}
}

// Primary is the ledger the action path reads: always the primary.
func (r *ReadRouter) Primary() *Ledger { return r.primary }

// LatestForAction is the latest snapshot of a proposition as the primary
// holds it: what may_act decides on.
func (r *ReadRouter) LatestForAction(ctx context.Context, propositionID string) (*warrant.View, error) {
	return r.primary.Latest(ctx, propositionID)
}

// LatestViewIDForAction is the primary's latest view id, for the gate's
// stale-view check.
func (r *ReadRouter) LatestViewIDForAction(ctx context.Context, propositionID string) (string, error) {
	return r.primary.LatestViewID(ctx, propositionID)
}

// Reader is the ledger for reads that may be a moment old: the standby,
// unless there is none, or MaxLag is set and the standby is further
// behind (or its lag cannot be measured).
func (r *ReadRouter) Reader(ctx context.Context) *Ledger {
	if r.standby == nil {
		return r.primary
	}
	if r.maxLag > 0 {
		if lag, err := r.Lag(ctx); err != nil || lag > r.maxLag {
			return r.primary
		}
	}
	return r.standby
}

// Latest is the latest snapshot as the read path sees it (Reader): not
// for deciding an action.
func (r *ReadRouter) Latest(ctx context.Context, propositionID string) (*warrant.View, error) {
	return r.Reader(ctx).Latest(ctx, propositionID)
}

// Lag is how many bytes of WAL the standby has yet to replay: the
// primary's pg_current_wal_insert_lsn minus the standby's
// pg_last_wal_replay_lsn (0 or less when caught up, or without standby).
// The insert position, not pg_current_wal_lsn (the write position):
// under synchronous_commit=off a commit is visible before its WAL is
// written, and the lag must count it.
func (r *ReadRouter) Lag(ctx context.Context) (int64, error) {
	if r.standby == nil {
		return 0, nil
	}
	var cur, replay string
	if err := r.primary.pool.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&cur); err != nil {
		return 0, ledgerErr("read the primary's WAL position", err)
	}
	// pg_is_in_recovery, not a NULL replay position: a primary that went
	// through crash recovery keeps the position it replayed to.
	var standby bool
	err := r.standby.pool.QueryRow(ctx, `SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn()::text, '')`).Scan(&standby, &replay)
	if err != nil {
		return 0, ledgerErr("read the standby's replay position", err)
	}
	if !standby || replay == "" {
		return 0, fmt.Errorf("%s is not a standby (not in recovery): open the standby's URL as the standby", r.standby.url)
	}
	a, err := parseLSN(cur)
	if err != nil {
		return 0, err
	}
	b, err := parseLSN(replay)
	if err != nil {
		return 0, err
	}
	return int64(a - b), nil
}

// parseLSN reads a pg_lsn as PostgreSQL prints it: two hex halves, X/Y.
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("WAL position %q: want X/Y in hex", s)
	}
	return h<<32 | l, nil
}
