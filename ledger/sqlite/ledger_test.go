package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// TestReadOnlyOpenOfMissingFile: a read-only open of a missing file names
// it as not found (the rest of read-only behaviour is the suite's,
// ledgertest ReadOnlyRefusesWrites).
func TestReadOnlyOpenOfMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if !errors.Is(err, sqlite.ErrNotFound) || !strings.Contains(err.Error(), "ledger not found") {
		t.Fatalf("open missing: %v", err)
	}
}

func TestSchemaVersionMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ewp.db")
	l, err := sqlite.Create(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	db := rawDB(t, path)
	mustExec(t, db, `DROP TRIGGER ledger_meta_no_UPDATE`)
	mustExec(t, db, `UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'`)
	db.Close()
	_, err = sqlite.Open(path, sqlite.Options{})
	if !errors.Is(err, ledger.ErrSchemaVersion) || !strings.Contains(err.Error(), "schema_version 99") {
		t.Fatalf("open: %v", err)
	}
}

func TestUpdateAndDeleteRefusedByDatabase(t *testing.T) {
	l := newLedger(t)
	put(t, l, decode(t, viewP))
	err := l.AppendPrimitives(context.Background(), func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		return []ledger.PrimitiveRow{{ID: "p", NameFold: "p", Body: []byte("{}")}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, l.Path())
	defer db.Close()
	for _, q := range []string{
		`UPDATE snapshots SET view_id = 'x'`, `DELETE FROM snapshots`,
		`UPDATE events SET hash = x'00'`, `DELETE FROM events`,
		`UPDATE records SET sum = x'00'`, `DELETE FROM records`,
		`DELETE FROM ledger_meta`, `DELETE FROM primitive_revisions`,
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

var _ snapshot.Lookup = snapshot.Map{}

func TestOpenOrCreateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	errs := make(chan error, 4)
	for range 4 {
		v := decode(t, viewP)
		go func() {
			l, err := sqlite.OpenOrCreate(path, sqlite.Options{})
			if err == nil {
				_, err = l.Put(context.Background(), []*warrant.View{v})
				l.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent OpenOrCreate: %v", err)
		}
	}
}

func TestForeignDatabaseIsNotTouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	mustExec(t, db, `CREATE TABLE notes (x TEXT)`)
	db.Close()
	if _, err := sqlite.OpenOrCreate(path, sqlite.Options{}); err == nil || !strings.Contains(err.Error(), "not an EWP ledger") {
		t.Fatalf("OpenOrCreate on another program's database: %v", err)
	}
	db = rawDB(t, path)
	defer db.Close()
	var mode string
	var n int
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n)
	if mode != "delete" || n != 1 {
		t.Fatalf("the foreign database was changed: journal_mode %s, %d objects", mode, n)
	}
}
