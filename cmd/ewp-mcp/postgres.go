package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/store"
)

// pgConnectTimeout bounds a connection attempt: during an outage a call
// fails within it (EWP_STORE_UNAVAILABLE) instead of hanging.
const pgConnectTimeout = 5 * time.Second

// pgOptions are the connection settings of a replica: the pool size
// (--db-pool), a statement timeout no longer than a call may run
// (--db-statement-timeout, default the request timeout), and a connect
// timeout below the request timeout. Settings in the URL
// (pool_max_conns, statement_timeout, connect_timeout) hold where the
// flags are not given.
func pgOptions(cfg config) postgres.Options {
	return postgres.Options{
		PoolSize:         cfg.dbPool,
		StatementTimeout: cfg.dbStatementTimeout,
		ConnectTimeout:   min(pgConnectTimeout, cfg.timeout),
	}
}

// openPostgres opens a PostgreSQL ledger for a replica: read-only
// (default_transaction_read_only on every connection) unless this
// process may write, stateless (everything is in the database, so any
// number of replicas serve the same ledger), with reads from --standby
// when given and the action reads (may_act) always from the primary.
func openPostgres(ctx context.Context, cfg config) (mcp.Store, io.Closer, error) {
	opt := pgOptions(cfg)
	if cfg.dbStatementTimeout == 0 && !strings.Contains(cfg.db, "statement_timeout=") {
		opt.StatementTimeout = cfg.timeout
	}
	primary, err := store.Open(ctx, cfg.db, store.Options{ReadOnly: !cfg.writable(), Postgres: opt})
	if err != nil {
		return nil, nil, err
	}
	reads, closer := store.Ledger(primary), io.Closer(primary)
	lo := ledgerstore.Options{Unavailable: postgres.IsUnavailable}
	if cfg.standby != "" {
		opt.ReadOnly = true
		sb, err := postgres.Open(ctx, cfg.standby, opt)
		if err != nil {
			primary.Close()
			return nil, nil, fmt.Errorf("--standby: %w", err)
		}
		reads, lo.Primary, closer = sb, primary, closers{primary, sb}
	}
	return ledgerStore{Store: ledgerstore.NewWith(reads, lo), l: reads}, closer, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		_ = c.Close()
	}
	return nil
}
