package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/internal/pgurl"
)

// Options tune how a log is opened.
type Options struct {
	// ReadOnly opens every connection with default_transaction_read_only
	// (ewp-audit list, show, verify, export).
	ReadOnly bool
	// Settings are the pool size, statement timeout and connect timeout
	// (0: the defaults, max(4, 2×GOMAXPROCS), 30 s, 5 s), each used only
	// where the URL gives none (pgurl.Settings). The writer needs one
	// connection at a time.
	pgurl.Settings
	// Now stamps decisions without a time, approvals and uses, and judges
	// expiry; nil means time.Now. Tests fix it.
	Now func() time.Time
	// MaxBatch caps how many pending writes share one commit; 0 means 512.
	MaxBatch int
}

// Log is the decision log in a PostgreSQL database. It is safe for
// concurrent use, and any number of processes (ewp-mcp replicas,
// ewp-audit) may open the same database: their writes take turns on the
// chain head (chainLock).
type Log struct {
	url     string
	ro      bool
	now     func() time.Time
	pool    *pgxpool.Pool
	ownPool bool
	wr      *writer
	once    sync.Once
}

var _ audit.Log = (*Log)(nil)

// ErrBrokenLog is wrapped by the error of opening for writing, or
// appending to, a log whose triggers or tail are broken.
var ErrBrokenLog = auditchain.ErrBrokenLog

// Open connects to the log made by Init in the database at dsn. Opened
// for writing, a log whose append-only triggers are missing, disabled or
// altered, or whose last entry no longer matches its row, is refused
// (ErrBrokenLog), as every later write is.
func Open(ctx context.Context, dsn string, opt Options) (*Log, error) {
	cfg, err := pgurl.PoolConfig(dsn, opt.Settings, pgurl.AccessOf(opt.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("decision log %s: connect: %w", pgurl.Redact(dsn), pgurl.Scrub(dsn, err))
	}
	l, err := open(ctx, pool, pgurl.Redact(dsn), opt)
	if err != nil {
		pool.Close()
		return nil, err
	}
	l.ownPool = true
	return l, nil
}

// OpenPool is Open over a pool the caller keeps; Close leaves it open.
// The pool must allow writes unless opt.ReadOnly: a replica's ledger pool
// is read-only (default_transaction_read_only), so a replica opens the log
// with Open instead. ReadOnly here only refuses writes in this process.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, opt Options) (*Log, error) {
	return open(ctx, pool, pgurl.Redact(pool.Config().ConnString()), opt)
}

func open(ctx context.Context, pool *pgxpool.Pool, name string, opt Options) (*Log, error) {
	l := &Log{url: name, ro: opt.ReadOnly, now: opt.Now, pool: pool}
	if l.now == nil {
		l.now = time.Now
	}
	if err := checkVersion(ctx, pool); err != nil {
		return nil, fmt.Errorf("decision log %s: %w", name, err)
	}
	if !l.ro {
		maxBatch := opt.MaxBatch
		if maxBatch <= 0 {
			maxBatch = 512
		}
		// A writer does not start on a broken log: the checks every batch
		// makes, once before the first; nor on one without the agent
		// tables, whose triggers those checks count.
		if err := requireAgentTables(ctx, pool); err != nil {
			return nil, fmt.Errorf("decision log %s: %w", name, err)
		}
		if err := checkGuards(ctx, pool); err != nil {
			return nil, fmt.Errorf("decision log %s: %w", name, err)
		}
		l.wr = startWriter(pool, maxBatch)
	}
	return l, nil
}

// Path is the database URL the log was opened from, password hidden.
func (l *Log) Path() string { return l.url }

// Pool is the log's connection pool.
func (l *Log) Pool() *pgxpool.Pool { return l.pool }

// CommitStats returns how many write transactions the log committed and
// how many writes they carried.
func (l *Log) CommitStats() (commits, writes int64) {
	if l.wr == nil {
		return 0, 0
	}
	return l.wr.gc.Stats()
}

// Close stops the writer (queued writes are committed first) and closes
// the pool if Open made it. It is safe to call more than once.
func (l *Log) Close() error {
	l.once.Do(func() {
		if l.wr != nil {
			l.wr.stop()
		}
		if l.ownPool {
			l.pool.Close()
		}
	})
	return nil
}

func (l *Log) errReadOnly() error {
	return fmt.Errorf("decision log %s is open read-only; writing needs a log opened without ReadOnly", l.url)
}

// storeErr names the failed operation and the database.
func (l *Log) storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("decision log %s: %s: %w", l.url, op, err)
}
