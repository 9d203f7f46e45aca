package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/ewp-go/ewp/internal/sqlitefile" // also registers the "sqlite" driver

	"github.com/ewp-go/ewp/audit"
)

// DefaultPath is where the decision log of the ledger at ledgerPath lives
// when no --audit is given: the same path with ".audit" appended
// (ewp.sqlite → ewp.sqlite.audit). ewp-mcp and ewp-audit both use it, so the same
// --db finds the same log.
func DefaultPath(ledgerPath string) string { return ledgerPath + ".audit" }

// Options tune how a log is opened.
type Options struct {
	// ReadOnly opens the file with mode=ro and query_only (list, show,
	// verify, export).
	ReadOnly bool
	// SyncFull makes every commit survive power loss (synchronous=FULL).
	// The default, synchronous=NORMAL in WAL mode, survives the process
	// being killed at any instant (a commit is in the OS's hands when
	// Record returns) but may lose the last commits if the machine loses
	// power; see the package documentation.
	SyncFull bool
	// BusyTimeout is how long a write waits for another process's lock
	// (ewp-audit approving while the server records). Zero means 10 s.
	BusyTimeout time.Duration
	// Now is the clock that stamps decisions without a time, approvals and
	// uses, and judges expiry; nil means time.Now. Tests fix it.
	Now func() time.Time
	// MaxBatch caps how many pending writes share one commit; zero means
	// 512.
	MaxBatch int
}

// busyTimeout is Options.BusyTimeout with its default.
func (o *Options) busyTimeout() time.Duration {
	if o.BusyTimeout == 0 {
		return 10 * time.Second
	}
	return o.BusyTimeout
}

// Log is an open decision log. It is safe for concurrent use; several
// processes may share the file (SQLite WAL locking).
type Log struct {
	path string
	ro   bool
	now  func() time.Time
	w    *sql.DB // one connection, IMMEDIATE transactions, owned by the writer goroutine
	r    *sql.DB // reader pool, query_only
	wr   *writer
	once sync.Once
}

var _ audit.Log = (*Log)(nil)

// ErrLogNotFound is wrapped by Open's error for a missing file.
var ErrLogNotFound = errors.New("decision log not found")

// Open opens an existing log; a missing file is an error (wrapping
// ErrLogNotFound), so a mistyped path never becomes a new, empty log.
// A log of another schema version is refused with ErrSchemaVersion.
func Open(path string, opt Options) (*Log, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist; ewp-mcp creates it when it starts with this ledger, or check --db/--audit", ErrLogNotFound, path)
	} else if err != nil {
		return nil, fmt.Errorf("open decision log %s: %w", path, err)
	}
	return open(path, opt, false)
}

// Create makes a new log at path and refuses to touch an existing file.
func Create(path string, opt Options) (*Log, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("create decision log: %s already exists; use Open or OpenOrCreate", path)
	}
	if opt.ReadOnly {
		return nil, errors.New("create decision log: a read-only log cannot be created")
	}
	return open(path, opt, true)
}

// OpenOrCreate opens the log at path, creating it when missing (the
// server at start-up).
func OpenOrCreate(path string, opt Options) (*Log, error) {
	if opt.ReadOnly {
		return Open(path, opt)
	}
	return open(path, opt, true)
}

func open(path string, opt Options, create bool) (*Log, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, ro: opt.ReadOnly, now: opt.Now}
	if l.now == nil {
		l.now = time.Now
	}
	busy := opt.busyTimeout()
	ctx := context.Background()
	if create {
		if err := sqlitefile.Create(ctx, abs, busy, pageSize, createSchema); err != nil {
			return nil, fmt.Errorf("create decision log %s: %w", path, err)
		}
	}
	if err := l.connect(abs, busy, opt.SyncFull); err != nil {
		l.Close() // connect may have opened the reader pool before failing
		return nil, err
	}
	if err := checkSchema(ctx, l.r, path); err != nil {
		l.Close()
		return nil, err
	}
	if !l.ro {
		// A writer never starts on a broken log (Verify, read-only, must),
		// and gives a log made before agent identities their tables.
		if err := checkLog(ctx, l.r); err != nil {
			l.Close()
			return nil, fmt.Errorf("open decision log %s: %w", path, err)
		}
		if err := addAgentTables(ctx, l.w); err != nil {
			l.Close()
			return nil, fmt.Errorf("open decision log %s: add the agent tables: %w", path, err)
		}
		maxBatch := opt.MaxBatch
		if maxBatch <= 0 {
			maxBatch = 512
		}
		if l.wr, err = startWriter(l.w, maxBatch); err != nil {
			l.Close()
			return nil, fmt.Errorf("open decision log %s: %w", path, err)
		}
	}
	return l, nil
}

func (l *Log) connect(abs string, busy time.Duration, syncFull bool) error {
	base := sqlitefile.DSN(abs, busy)
	var err error
	if l.ro {
		l.r, err = sql.Open("sqlite", base+"&mode=ro&_pragma=query_only(1)")
		capReaders(l.r)
		return err
	}
	// synchronous=NORMAL in WAL: a commit has written its frames to the
	// WAL file (the OS page cache) before it returns, so it survives a
	// kill -9 of the process; only the checkpoint fsyncs. FULL fsyncs the
	// WAL on every commit, for power loss. See the package documentation.
	sync := "NORMAL"
	if syncFull {
		sync = "FULL"
	}
	rw := base + "&_pragma=journal_mode(WAL)&_pragma=synchronous(" + sync + ")"
	l.r, err = sql.Open("sqlite", rw+"&_pragma=query_only(1)")
	capReaders(l.r)
	if err != nil {
		return err
	}
	var page int64
	if err := l.r.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil {
		return fmt.Errorf("open decision log %s: %w", l.path, err)
	}
	if l.w, err = sql.Open("sqlite", rw+"&_txlock=immediate"+checkpointPragmas(page)); err != nil {
		return err
	}
	l.w.SetMaxOpenConns(1)
	return nil
}

// pageSize is a new log's page size. Every commit rewrites the partly
// filled last page of each table and index it appends to, and the file's
// first page, to the WAL: with 4 KiB pages a commit of the server's
// usual handful of decisions writes less than half the bytes it writes
// with the ledger's 16 KiB (audit/README.md, "What the log costs"). A
// log made with another page size keeps it.
const pageSize = 4 << 10

// checkpointBytes is how much WAL the writer lets grow before its commit
// checkpoints it into the file (SQLite's default, 1,000 pages, is 4 MiB
// at this page size). A checkpoint fsyncs the WAL and the file and holds
// up the commit that runs it, and every caller waiting on that commit:
// fewer, larger checkpoints cost the server much less (audit/README.md).
// The price is disk space: the WAL file keeps the size it reached, and a
// restart after a crash reads it back.
const checkpointBytes = 256 << 20

// checkpointPragmas are the write connection's checkpoint settings for a
// file of page-byte pages: checkpointBytes between checkpoints.
func checkpointPragmas(page int64) string {
	pages := checkpointBytes / max(page, 512)
	return fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", pages)
}

// capReaders keeps a fixed pool of reader connections: each new SQLite
// connection re-reads the schema, which bursts of reads would repeat.
func capReaders(db *sql.DB) {
	if db == nil {
		return
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}

// Path is the file the log was opened from.
func (l *Log) Path() string { return l.path }

// CommitStats returns how many write transactions the log committed and
// how many writes they carried (0, 0 for a read-only log).
func (l *Log) CommitStats() (commits, writes int64) {
	if l.wr == nil {
		return 0, 0
	}
	return l.wr.gc.Stats()
}

// Close stops the writer (pending writes are committed first) and
// releases the connections. It is safe to call more than once.
func (l *Log) Close() error {
	var errs []error
	l.once.Do(func() {
		if l.wr != nil {
			l.wr.stop()
		}
		if l.w != nil {
			errs = append(errs, l.w.Close())
		}
		if l.r != nil {
			errs = append(errs, l.r.Close())
		}
	})
	return errors.Join(errs...)
}

func (l *Log) errReadOnly() error {
	return fmt.Errorf("decision log %s is open read-only; writing needs a log opened without ReadOnly", l.path)
}

// storeErr names the failed operation and the file.
func (l *Log) storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("decision log %s: %s: %w", l.path, op, err)
}
