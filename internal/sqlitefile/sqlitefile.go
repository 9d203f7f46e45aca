// Package sqlitefile holds what the two SQLite stores (the ledger and the
// decision log) do alike to a database file: name it in a driver URI,
// create it safely while another process may be creating it too, and wait
// out the one lock SQLite does not wait for.
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DSN is the driver URI of the file at abs with a busy timeout; callers
// append further "&…" parameters.
func DSN(abs string, busy time.Duration) string {
	return "file:" + uriPath(abs) + fmt.Sprintf("?_pragma=busy_timeout(%d)", busy.Milliseconds())
}

// uriPath escapes the characters a file: URI gives a meaning to.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(p))
}

// Create lays out the database at abs unless it exists, through a
// connection of its own, with pages of pageSize bytes (a power of two from
// 512 to 65536; each store says why its size): the page size must be
// chosen before the file switches to WAL. Only a new, empty file gets
// those pragmas: WAL comes before any table, so a second process racing
// to create the same file only ever meets a WAL database, and an existing
// file of another program is never converted (layout then refuses it).
// layout runs on that connection and must leave an existing schema alone.
// Create retries while SQLite reports SQLITE_BUSY, up to busy: switching a
// new file to WAL takes an exclusive lock SQLite does not wait for, so two
// processes creating one file need it.
func Create(ctx context.Context, abs string, busy time.Duration, pageSize int, layout func(context.Context, *sql.DB) error) error {
	return retryBusy(busy, func() error {
		db, err := sql.Open("sqlite", DSN(abs, busy)+"&_txlock=immediate")
		if err != nil {
			return err
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
			for _, q := range []string{fmt.Sprintf(`PRAGMA page_size = %d`, pageSize), `PRAGMA journal_mode = WAL`} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					return err
				}
			}
		}
		return layout(ctx, db)
	})
}

func retryBusy(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ErrForeign is returned by Unclaimed for a database that holds tables
// but not the store's own: some other program's file, never touched.
var ErrForeign = errors.New("the file is an SQLite database of another kind")

// Unclaimed reports, inside the transaction that would create a store's
// schema, whether the file still needs it: false when metaTable exists
// (another process creating the same file got there first), ErrForeign
// when the file holds other tables.
func Unclaimed(ctx context.Context, tx *sql.Tx, metaTable string) (bool, error) {
	var tables, meta int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = ?) FROM sqlite_master`, metaTable).Scan(&tables, &meta); err != nil {
		return false, err
	}
	if meta > 0 {
		return false, nil
	}
	if tables > 0 {
		return false, ErrForeign
	}
	return true, nil
}
