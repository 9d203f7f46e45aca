package jsonstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Names inside the store directory. They all start with ".", which no
// escaped id does (see escape), so they can never collide with a
// proposition's directory.
const (
	markerName  = ".ewp-jsonstore"
	lockName    = ".lock"
	journalName = ".journal"
	stagingName = ".staging"
)

// FormatVersion is the on-disk layout version written in the marker file.
const FormatVersion = 1

type marker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

const formatName = "ewp-jsonstore"

// ErrNotFound is returned by Open for a directory that is not a store.
var ErrNotFound = errors.New("jsonstore: store not found")

// ErrFormat is returned by Open for a store written in another layout
// version.
var ErrFormat = errors.New("jsonstore: store format version mismatch")

// Error is a storage failure, as opposed to a refusal of the input (a
// *warrant.Error). Callers map the two to different exit codes and errors.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "jsonstore: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{Op: op, Err: err}
}

// Options tune how a store is opened.
type Options struct {
	// ReadOnly refuses every write. A read-only store still takes the
	// shared lock to read, so it never sees half a batch.
	ReadOnly bool
	// LockTimeout bounds the wait for another writer's lock. Zero means
	// 30 s, as the ledger's busy timeout.
	LockTimeout time.Duration
}

// Store is an open directory-of-JSON evidence store. It is safe for
// concurrent use by many goroutines, and several processes may share one
// directory.
type Store struct {
	dir      string
	opt      Options
	lockPath string
	// mu orders this process's goroutines before they reach the file
	// lock: flock serialises open file descriptions, and although each
	// operation opens its own, queueing on a mutex is cheaper.
	mu sync.RWMutex
	// crash, when set by a test, is called at each step of a commit; an
	// error stops the commit where it is, as a killed process would.
	crash func(step string) error
}

// Create makes a new store in dir, which must not exist or be empty.
func Create(dir string, opt Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, storeErr("create", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, storeErr("create", err)
	}
	if len(entries) > 0 {
		return nil, storeErr("create", fmt.Errorf("%s is not empty", dir))
	}
	return OpenOrCreate(dir, opt)
}

// OpenOrCreate opens the store in dir, creating it when dir is missing or
// empty. It is for writers; readers use Open. Two processes may race to
// create the same store: the marker is written under the exclusive lock,
// so the loser finds it in place.
func OpenOrCreate(dir string, opt Options) (*Store, error) {
	if opt.ReadOnly {
		return nil, storeErr("create", errors.New("a read-only store cannot be created"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, storeErr("create", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, storeErr("create", err)
	}
	f.Close()
	s := newStore(dir, opt)
	err = s.withLock(context.Background(), lockExclusive, func() error {
		if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
			return nil
		}
		if err := syncDir(dir); err != nil { // the lock file's entry
			return err
		}
		data, _ := json.Marshal(marker{Format: formatName, Version: FormatVersion})
		return replaceFile(dir, markerName, data)
	})
	if err != nil {
		return nil, storeErr("create", err)
	}
	return Open(dir, opt)
}

// Open opens an existing store. It never creates one: a directory without
// the marker is ErrNotFound, so a mistyped path cannot become a new, empty
// store that answers "unknown proposition".
func Open(dir string, opt Options) (*Store, error) {
	raw, err := os.ReadFile(filepath.Join(dir, markerName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, dir)
	}
	if err != nil {
		return nil, storeErr("open", err)
	}
	var m marker
	if err := json.Unmarshal(raw, &m); err != nil || m.Format != formatName {
		return nil, fmt.Errorf("%w: %s does not hold a %s marker", ErrFormat, dir, formatName)
	}
	if m.Version != FormatVersion {
		return nil, fmt.Errorf("%w: %s is version %d, this build reads version %d", ErrFormat, dir, m.Version, FormatVersion)
	}
	s := newStore(dir, opt)
	if opt.ReadOnly {
		return s, nil
	}
	// Finish or undo a batch that a crashed writer left behind now, so the
	// first reader does not pay for it.
	err = s.withLock(context.Background(), lockExclusive, func() error {
		if err := s.recover(); err != nil {
			return err
		}
		return s.sweepTemps()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// sweepTemps removes temporary files that replaceFile left in the store
// directory when a writer died between creating and renaming one. They are
// harmless (nothing reads them), so this happens only at Open.
func (s *Store) sweepTemps() error {
	temps, err := filepath.Glob(filepath.Join(s.dir, ".*.tmp-*"))
	if err != nil {
		return storeErr("open", err)
	}
	for _, t := range temps {
		if err := os.Remove(t); err != nil && !errors.Is(err, os.ErrNotExist) {
			return storeErr("open", err)
		}
	}
	return nil
}

func newStore(dir string, opt Options) *Store {
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = 30 * time.Second
	}
	return &Store{dir: dir, opt: opt, lockPath: filepath.Join(dir, lockName)}
}

// Dir is the directory the store was opened from.
func (s *Store) Dir() string { return s.dir }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.opt.ReadOnly }

// Close releases nothing today (every operation opens and closes its own
// files); it exists so callers treat the store like the ledger.
func (s *Store) Close() error { return nil }

// withLock runs fn holding the store lock: shared for readers, exclusive
// for writers, first among this process's goroutines, then across
// processes.
func (s *Store) withLock(ctx context.Context, how int, fn func() error) error {
	if how == lockExclusive {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	flag := os.O_RDWR
	if s.opt.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(s.lockPath, flag, 0)
	if err != nil {
		return storeErr("lock", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.LockTimeout)
	defer cancel()
	if handedOff, err := flock(ctx, f, how); err != nil {
		if !handedOff {
			f.Close()
		}
		return storeErr("lock", err)
	}
	defer f.Close()
	defer funlock(f)
	return fn()
}

// write runs fn under the exclusive lock after recovering any batch a
// crashed writer left behind.
func (s *Store) write(ctx context.Context, fn func() error) error {
	if s.opt.ReadOnly {
		return storeErr("write", errors.New("the store is open read-only"))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.withLock(ctx, lockExclusive, func() error {
		if err := s.recover(); err != nil {
			return err
		}
		return fn()
	})
}

// read runs fn under the shared lock. A journal left by a crashed writer
// means the directory may hold half a batch; a writable store then
// finishes the batch first (under the exclusive lock) and reads after.
func (s *Store) read(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		pending := false
		err := s.withLock(ctx, lockShared, func() error {
			if pending = s.hasJournal(); pending {
				return nil
			}
			return fn()
		})
		if err != nil || !pending {
			return err
		}
		if s.opt.ReadOnly || attempt == 3 {
			return storeErr("read", errors.New("an interrupted write awaits recovery; open the store for writing once to finish it"))
		}
		if err := s.withLock(ctx, lockExclusive, s.recover); err != nil {
			return err
		}
	}
}
