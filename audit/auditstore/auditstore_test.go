package auditstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func TestWhere(t *testing.T) {
	url := "postgres://u@h/db"
	cases := []struct{ db, audit, want string }{
		{"/var/lib/ewp.db", "", "/var/lib/ewp.db.audit"},
		{"/var/lib/ewp.db", "/elsewhere.audit", "/elsewhere.audit"},
		{url, "", url},
		{"/var/lib/ewp.db", url, url},
	}
	for _, c := range cases {
		if got, err := auditstore.Where(c.db, c.audit); err != nil || got != c.want {
			t.Errorf("Where(%q, %q) = %q, %v; want %q", c.db, c.audit, got, err, c.want)
		}
	}
	if _, err := auditstore.Where("", ""); err == nil {
		t.Error("no --db and no --audit gave a log")
	}
}

// TestOpenBothStores: the same calls open an SQLite log beside a file
// ledger and the PostgreSQL log in the ledger's database; only Create
// makes a missing one.
func TestOpenBothStores(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ewp.db")
	url := pgtest.DB(t)
	for _, c := range []struct {
		db      string
		missing error
	}{{file, sqlite.ErrLogNotFound}, {url, postgres.ErrNoLog}} {
		if _, err := auditstore.Open(ctx, c.db, "", auditstore.Options{}); !errors.Is(err, c.missing) {
			t.Fatalf("%s: opening a missing log: %v", c.db, err)
		}
		l, err := auditstore.Open(ctx, c.db, "", auditstore.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		d := audittest.PendingDecision("P", 1)
		if err := l.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
		l.Close()
		ro, err := auditstore.Open(ctx, c.db, "", auditstore.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ro.Decision(ctx, d.ID); err != nil {
			t.Fatalf("%s: %v", ro.Path(), err)
		}
		audittest.MustVerify(t, ro)
		ro.Close()
	}
}
