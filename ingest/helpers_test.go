package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// storeKind names one of the two ledger stores a test runs on.
type storeKind string

const (
	sqliteStore   storeKind = "sqlite"
	postgresStore storeKind = "postgres"
)

// eachStore runs fn as subtests /sqlite and /postgres: the same test on
// both ledgers (issue #13). Without a PostgreSQL server the /postgres
// subtest skips loudly, or fails under CI (see internal/pgtest).
func eachStore(t *testing.T, fn func(t *testing.T, k storeKind)) {
	for _, k := range []storeKind{sqliteStore, postgresStore} {
		t.Run(string(k), func(t *testing.T) { fn(t, k) })
	}
}

// freshLedger opens a new, empty ledger of kind k, closed when t ends, and
// returns it with its DSN (for a second connection, as a reader).
func freshLedger(t testing.TB, k storeKind) (store.Ledger, string) {
	t.Helper()
	f := newFactory(t, k)
	l, done := f.fresh(t)
	t.Cleanup(done)
	return l, f.last
}

// ledgerFactory hands out fresh ledgers of one kind cheaply. For SQLite it
// creates one empty ledger and copies its file for each, on tmpfs when the
// machine has one; for PostgreSQL each is a new schema in a database
// shared by the package's tests. A corpus round trip needs a ledger per
// document (documents of one proposition reuse record ids with other
// content, which one ledger would rightly refuse), and creating thousands
// of ledgers with fsyncs on a disk would take minutes. The ledger code
// exercised is the same.
type ledgerFactory struct {
	kind     storeKind
	dir      string
	template []byte
	pgDB     string
	n        int
	last     string // the DSN of the last ledger handed out
}

func newFactory(t testing.TB, k storeKind) *ledgerFactory {
	t.Helper()
	if k == postgresStore {
		db := pgtest.Template(t, fmt.Sprintf("ewp_ingest_%d", os.Getpid()), func(string) error { return nil })
		return &ledgerFactory{kind: k, pgDB: pgtest.Get(t).URL(db)}
	}
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "ewp-test-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	tpl := filepath.Join(dir, "template.db")
	l, err := sqlite.Create(tpl, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, err := os.ReadFile(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return &ledgerFactory{kind: k, dir: dir, template: data}
}

// fresh returns an empty ledger and a function that closes and deletes it
// (a PostgreSQL schema is dropped when t ends).
func (f *ledgerFactory) fresh(t testing.TB) (store.Ledger, func()) {
	t.Helper()
	f.n++
	if f.kind == postgresStore {
		f.last = pgtest.Schema(t, f.pgDB)
		l, err := store.Open(context.Background(), f.last, store.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		return l, func() { l.Close() }
	}
	p := filepath.Join(f.dir, "l"+strconv.Itoa(f.n)+".db")
	if err := os.WriteFile(p, f.template, 0o600); err != nil {
		t.Fatal(err)
	}
	f.last = p
	l, err := sqlite.Open(p, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l, func() {
		l.Close()
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(p + s)
		}
	}
}
