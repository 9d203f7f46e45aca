package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// pgConnectTimeout bounds a connection attempt: during an outage a call
// fails within it (EWP_STORE_UNAVAILABLE) instead of hanging.
const pgConnectTimeout = 5 * time.Second

// pgSettings are the connection settings of a replica, the same for
// every pool (ledger, decision log, standby): the pool size (--db-pool), a
// statement timeout no longer than a call may run
// (--db-statement-timeout, default the request timeout), and a connect
// timeout below the request timeout. A setting in a pool's URL
// (pool_max_conns, statement_timeout, connect_timeout) wins over these
// (pgurl.Settings).
func pgSettings(cfg config) pgurl.Settings {
	st := cfg.dbStatementTimeout
	if st == 0 {
		st = cfg.timeout
	}
	return pgurl.Settings{
		PoolSize:         cfg.dbPool,
		StatementTimeout: st,
		ConnectTimeout:   min(pgConnectTimeout, cfg.timeout),
	}
}

// openPostgres opens a PostgreSQL ledger for a replica: read-only
// (default_transaction_read_only on every connection) unless this
// process may write, stateless (everything is in the database, so any
// number of replicas serve the same ledger), with reads from --standby
// when given and the action reads (may_act) always from the primary.
func openPostgres(ctx context.Context, cfg config) (mcp.Store, io.Closer, error) {
	opt := postgres.Options{Settings: pgSettings(cfg)}
	primary, err := store.Open(ctx, cfg.db, store.Options{ReadOnly: !cfg.writable(), Postgres: opt})
	if err != nil {
		return nil, nil, err
	}
	lo := ledgerstore.Options{Unavailable: postgres.IsUnavailable}
	if cfg.standby == "" {
		return ledgerStore{Store: ledgerstore.NewWith(primary, lo), l: primary, primary: primary}, primary, nil
	}
	opt.ReadOnly = true
	sb, err := postgres.Open(ctx, cfg.standby, opt)
	if err != nil {
		primary.Close()
		return nil, nil, fmt.Errorf("--standby: %w", err)
	}
	pl := primary.(*postgres.Ledger)
	r := routed{postgres.NewReadRouter(pl, sb, postgres.RouteOptions{MaxLag: cfg.standbyMaxLag})}
	lo.Primary = pl
	return ledgerStore{Store: ledgerstore.NewWith(r, lo), l: sb, primary: primary}, closers{primary, sb}, nil
}

// routed serves reads through a ReadRouter: from the standby (or the
// primary, when the standby is more than --standby-max-lag behind), and
// writes on the primary. The read an action rests on never comes here:
// ledgerstore sends it to Options.Primary.
type routed struct{ r *postgres.ReadRouter }

func (r routed) Latest(ctx context.Context, prop string) (*warrant.View, error) {
	return r.r.Latest(ctx, prop)
}

func (r routed) Get(ctx context.Context, prop, viewID string) (*warrant.View, error) {
	return r.r.Reader(ctx).Get(ctx, prop, viewID)
}

func (r routed) List(ctx context.Context, query string, limit int) ([]ledger.PropositionSummary, error) {
	return r.r.Reader(ctx).List(ctx, query, limit)
}

func (r routed) Put(ctx context.Context, views []*warrant.View) (ledger.PutResult, error) {
	return r.r.Primary().Put(ctx, views)
}

func (r routed) Append(ctx context.Context, prop string, recs snapshot.Records) (ledger.AppendResult, error) {
	return r.r.Primary().Append(ctx, prop, recs)
}

func (r routed) AppendCheck(ctx context.Context, prop string, c warrant.Check) (ledger.AppendResult, error) {
	return r.r.Primary().AppendCheck(ctx, prop, c)
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		_ = c.Close()
	}
	return nil
}
