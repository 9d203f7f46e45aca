package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ewp-go/ewp/internal/sqlitefile" // also registers the "sqlite" driver
	"github.com/ewp-go/ewp/warrant"
)

// Options tune how a ledger is opened.
type Options struct {
	// ReadOnly opens the file with mode=ro and query_only: the process can
	// never write, which is what an evaluate-only server wants.
	ReadOnly bool
	// BusyTimeout is how long a statement waits for another process's
	// lock before failing. Zero means 30 s, long enough for a large
	// ingest transaction to commit.
	BusyTimeout time.Duration
	// Now stamps created_at; nil means time.Now. Tests fix it.
	Now func() time.Time
	// MaxViewBytes bounds a snapshot's stored form (warrant.Encode): Put
	// and appends refuse a bigger one, and reads refuse one stored bigger
	// (by a ledger opened with a higher limit) before reading its bytes,
	// both with warrant.CodeLimitExceeded. Zero means
	// warrant.DefaultLimits.MaxViewBytes, negative no limit. Verify reads
	// every body whatever the limit: it must hash them.
	MaxViewBytes int
}

// Ledger is an open EWP ledger. It is safe for concurrent use by many
// goroutines; several processes may share one file (SQLite WAL locking).
type Ledger struct {
	path string
	ro   bool
	// foldedText: the search index holds folded text (metaSearchText).
	foldedText bool
	// maxBody is the resolved Options.MaxViewBytes; maxAny the same as a
	// query argument, boxed once rather than on every read.
	maxBody int64
	maxAny  any
	// immutable: opened with immutable=1 (read-only storage, no WAL).
	immutable bool
	now       func() time.Time
	// w has a single connection whose transactions begin IMMEDIATE, so a
	// writer takes the write lock before it reads "latest" and two
	// appends can never both extend the same snapshot.
	w *sql.DB
	r *sql.DB
	// reads holds the hot read statements, prepared on first use (the
	// schema must exist first) and reused by every request after that.
	reads struct {
		once  sync.Once
		stmts map[string]*sql.Stmt // by SQL text
	}
}

// ErrNotFound is wrapped by Open's error for a missing file.
var ErrNotFound = errors.New("ledger not found")

// Open opens an existing ledger. It never creates a file: a missing path is
// an error containing "ledger not found", so a mistyped --db cannot turn
// into a new, empty ledger that silently answers "unknown proposition".
func Open(path string, opt Options) (*Ledger, error) {
	if err := notADirectory(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist; create it with `ewp-ingest --db %s FILE...` or fix --db", ErrNotFound, path, path)
	} else if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	return open(path, opt, false)
}

// notADirectory refuses a directory named as the ledger (--db /tmp),
// which SQLite would answer with an I/O error that says nothing of the
// cause.
func notADirectory(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("ledger %s is a directory, not a ledger file: name a file in it, e.g. %s", path, filepath.Join(path, "ewp.sqlite"))
	}
	return nil
}

// Create makes a new ledger at path and refuses to touch an existing file.
func Create(path string, opt Options) (*Ledger, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("create ledger: %s already exists; use Open or OpenOrCreate", path)
	}
	if opt.ReadOnly {
		return nil, errors.New("create ledger: a read-only ledger cannot be created")
	}
	return open(path, opt, true)
}

// OpenOrCreate opens the ledger at path, creating it when it is missing.
// It is for writers (ewp-ingest); readers use Open.
// Two writers may race to create the same file: the loser finds the schema
// in place (createSchema checks inside its write transaction) and opens it.
func OpenOrCreate(path string, opt Options) (*Ledger, error) {
	if err := notADirectory(path); err != nil {
		return nil, err
	}
	if opt.ReadOnly {
		return Open(path, opt)
	}
	return open(path, opt, true)
}

// pageSize is a new ledger's page size: 16 KiB pages hold several stored
// bodies each, where the default 4 KiB would give a typical 2 KiB body a
// page of its own.
const pageSize = 16 << 10

func open(path string, opt Options, create bool) (*Ledger, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	l := &Ledger{path: path, ro: opt.ReadOnly, now: opt.Now, maxBody: maxBody(opt.MaxViewBytes)}
	l.maxAny = l.maxBody
	if l.now == nil {
		l.now = time.Now
	}
	busy := opt.BusyTimeout
	if busy == 0 {
		busy = 30 * time.Second
	}
	ctx := context.Background()
	if create {
		if err := sqlitefile.Create(ctx, abs, busy, pageSize, createSchema); err != nil {
			return nil, fmt.Errorf("create ledger %s: %w", path, err)
		}
	}
	if err := l.connect(abs, busy); err != nil {
		return nil, err
	}
	err = checkSchema(ctx, l.r, path)
	if err == nil {
		l.foldedText, err = readSearchText(ctx, l.r)
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// maxBody resolves Options.MaxViewBytes.
func maxBody(n int) int64 {
	switch {
	case n == 0:
		return int64(warrant.DefaultLimits.MaxViewBytes)
	case n < 0:
		return math.MaxInt64
	}
	return int64(n)
}

// connect opens the reader pool and, unless read-only, the writer.
func (l *Ledger) connect(abs string, busy time.Duration) error {
	base := sqlitefile.DSN(abs, busy)
	var err error
	if l.ro {
		params, err := readOnlyParams(abs)
		if err != nil {
			return err
		}
		l.immutable = strings.Contains(params, "immutable=1")
		l.r, err = sql.Open("sqlite", base+params+"&_pragma=query_only(1)"+readerMmap)
		capReaders(l.r)
		return err
	}
	// synchronous=FULL: a committed ingest survives power loss, not only a
	// killed process; commits are per batch, so the fsync is cheap.
	rw := base + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	// The writer's page cache (writerCache) is per connection, and the
	// writer has one. Statement journals (needed by multi-row INSERTs)
	// stay in memory.
	if l.w, err = sql.Open("sqlite", rw+"&_txlock=immediate&_pragma=cache_size("+writerCache+")&_pragma=temp_store(MEMORY)"); err != nil {
		return err
	}
	l.w.SetMaxOpenConns(1)
	l.r, err = sql.Open("sqlite", rw+"&_pragma=query_only(1)"+readerMmap)
	capReaders(l.r)
	return err
}

// readOnlyParams chooses how a read-only ledger is opened. A WAL database
// is normally read through its -shm file (the shared index of the -wal),
// which SQLite creates beside the ledger when it is missing: on storage
// this process cannot write (a read-only mount, an immutable file or
// directory, a directory without write permission) that fails, and the
// ledger could not be served at all. So:
//
//   - When the -shm file exists (a writer has the ledger open, or had) or
//     this process can create it, plain mode=ro: SQLite shares the WAL
//     with writers and sees their commits.
//   - Otherwise no writer has the ledger open (a WAL writer keeps the -shm
//     file) and none can create one as this process: the file is opened
//     with immutable=1, without locks or WAL. That is safe only while
//     nothing writes the file, which read-only storage guarantees; where
//     another account may write the directory (a permission split), it
//     must not ingest while this reader runs, or the reader misses the
//     new snapshots and may read pages mid-checkpoint: give the reader's
//     account write access to the directory instead, and it shares the
//     WAL like any reader. [Ledger.Immutable] tells a server which case
//     it is in.
//   - A non-empty -wal file then holds commits not yet in the main file,
//     which immutable=1 would not see: refused, with what to do.
func readOnlyParams(abs string) (string, error) {
	if _, err := os.Stat(abs + "-shm"); err == nil || canCreateIn(filepath.Dir(abs)) {
		return "&mode=ro", nil
	}
	if st, err := os.Stat(abs + "-wal"); err == nil && st.Size() > 0 {
		return "", fmt.Errorf("open ledger %s read-only: its directory cannot be written, and %s-wal holds commits not yet checkpointed into the file, which a reader without the -shm index cannot see; open the ledger once where it can be written (e.g. `ewp-ingest verify --db` on a writable copy of the file and its -wal) and serve the result", abs, abs)
	}
	return "&mode=ro&immutable=1", nil
}

// Immutable reports whether the ledger was opened with SQLite's
// immutable=1 (see readOnlyParams): on read-only storage, without WAL
// sharing, so writes by another process are not seen.
func (l *Ledger) Immutable() bool { return l.immutable }

// writerCache is the writer connection's page cache, in KiB (negative, as
// SQLite's cache_size takes it): 32 MiB. A big transaction's dirty pages
// beyond it spill to the WAL mid-transaction, which costs nothing
// measurable (ewp-ingest of 100,000 views: same CPU as with 256 MiB). A
// larger cache is not free: under this SQLite's allocator a cached page
// takes about three times its size in resident memory (a 256 MiB cache
// held ~700 MB), which was most of a large ingest's peak.
const writerCache = "-32768"

// readerMmap lets reader connections read the database file through a
// memory map (up to SQLite's 2 GB cap) instead of a pread system call and a
// copy per page: point reads of random propositions in a large ledger miss
// the page cache of every connection, and those calls were a sixth of an
// MCP server's CPU per warrant_now. The file only grows (the ledger never
// vacuums or truncates), which is the case SQLite's memory map handles;
// the write connection keeps ordinary I/O.
const readerMmap = "&_pragma=mmap_size(2147418112)"

// capReaders keeps a fixed pool of reader connections. Without a cap,
// bursts of concurrent reads open and close connections, and each new
// SQLite connection re-reads the schema: under 64 concurrent MCP clients
// that churn cost a third of the server's throughput.
func capReaders(db *sql.DB) {
	if db == nil {
		return
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}

// Path is the file the ledger was opened from.
func (l *Ledger) Path() string { return l.path }

// ReadOnly reports whether the ledger was opened read-only.
func (l *Ledger) ReadOnly() bool { return l.ro }

// Close releases the connections.
func (l *Ledger) Close() error {
	var errs []error
	for _, st := range l.reads.stmts {
		errs = append(errs, st.Close())
	}
	if l.w != nil {
		errs = append(errs, l.w.Close())
	}
	if l.r != nil {
		errs = append(errs, l.r.Close())
	}
	return errors.Join(errs...)
}

// errReadOnly is returned by writes on a read-only ledger.
func (l *Ledger) errReadOnly() error {
	return fmt.Errorf("ledger %s is open read-only; writes need a ledger opened without ReadOnly (the ingest role)", l.path)
}
