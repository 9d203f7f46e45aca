package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// Options tune how a ledger is opened.
type Options struct {
	// ReadOnly opens every connection with default_transaction_read_only:
	// the process can never write, whatever its role may do. ewp-mcp
	// replicas use it (with the reader role).
	ReadOnly bool
	// Settings are the pool size, statement timeout and connect timeout
	// (0: the defaults, max(4, 2×GOMAXPROCS), 30 s, 5 s), each used only
	// where the URL gives none (pgurl.Settings). Every replica's pool
	// counts against the server's max_connections; a large ingest is many
	// statements, each far below the statement timeout.
	pgurl.Settings
	// Now stamps created_at; nil means time.Now. Tests and copies fix it.
	Now func() time.Time
	// MaxViewBytes bounds a snapshot's stored form as the SQLite ledger's
	// option does: Put and appends refuse a bigger one, reads refuse one
	// stored bigger before its bytes leave the server, both with
	// warrant.CodeLimitExceeded. Zero means
	// warrant.DefaultLimits.MaxViewBytes, negative no limit. Verify reads
	// every body whatever the limit.
	MaxViewBytes int
}

// Ledger is an EWP ledger in a PostgreSQL database. It is safe for
// concurrent use; any number of processes may open the same database, and
// their writes are serialised on the chain head (see write).
type Ledger struct {
	url     string
	ro      bool
	now     func() time.Time
	pool    *pgxpool.Pool
	maxBody int64
}

// Open connects to an existing ledger (made by Init). A database without
// one is refused with what to do.
func Open(ctx context.Context, dsn string, opt Options) (*Ledger, error) {
	cfg, err := pgurl.PoolConfig(dsn, opt.Settings, pgurl.AccessOf(opt.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, ledgerErr("connect", pgurl.Scrub(dsn, err))
	}
	l := &Ledger{url: pgurl.Redact(dsn), ro: opt.ReadOnly, now: opt.Now, pool: pool, maxBody: maxBody(opt.MaxViewBytes)}
	if l.now == nil {
		l.now = time.Now
	}
	if err := checkVersion(ctx, pool, l.url); err != nil {
		pool.Close()
		return nil, err
	}
	return l, nil
}

func maxBody(n int) int64 {
	switch {
	case n == 0:
		return int64(warrant.DefaultLimits.MaxViewBytes)
	case n < 0:
		return math.MaxInt64
	}
	return int64(n)
}

// Path is the database URL the ledger was opened from, password hidden.
func (l *Ledger) Path() string { return l.url }

// ReadOnly reports whether the ledger was opened read-only.
func (l *Ledger) ReadOnly() bool { return l.ro }

// Pool is the connection pool, for callers that keep more tables in the
// same database (the decision log).
func (l *Ledger) Pool() *pgxpool.Pool { return l.pool }

// Close releases the connections.
func (l *Ledger) Close() error {
	l.pool.Close()
	return nil
}

func (l *Ledger) errReadOnly() error {
	return fmt.Errorf("ledger %s is open read-only; writes need a ledger opened without ReadOnly (the ingest role)", l.url)
}

// ledgerErr wraps a storage failure as the SQLite ledger does, so callers
// map both stores' failures alike.
func ledgerErr(op string, err error) error {
	var le *ledger.Error
	if errors.As(err, &le) {
		return err
	}
	return &ledger.Error{Op: op, Err: err}
}

func ledgerErrOrNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return ledgerErr(op, err)
}
