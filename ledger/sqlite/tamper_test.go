package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// tamperLedger stores a small history and returns the ledger's path.
func tamperLedger(t *testing.T) string {
	t.Helper()
	l := newLedger(t)
	var vs []*warrant.View
	for i := range 6 {
		vs = append(vs, decode(t, string(snapshottest.SyntheticView(i/3, i%3))))
	}
	put(t, l, vs...)
	err := l.AppendPrimitives(context.Background(), func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		return []ledger.PrimitiveRow{{ID: "file", NameFold: "file", Body: []byte(`{"name":"File"}`)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatalf("fresh ledger does not verify: %v", err)
	}
	return l.Path()
}

// verifyBroken reopens the file and expects Verify to name the event.
func verifyBroken(t *testing.T, path string, seq int64, table, what string) {
	t.Helper()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(context.Background())
	var brk *ledger.Break
	if !errors.As(err, &brk) || rep.OK() {
		t.Fatalf("verify passed an edited ledger: %+v %v", rep, err)
	}
	if brk.Seq != seq || brk.Table != table || !strings.Contains(brk.What, what) {
		t.Fatalf("verify named %q, want event %d in %s mentioning %q", brk.Error(), seq, table, what)
	}
	t.Logf("verify says: %v", brk)
}

func TestTamperIsDetected(t *testing.T) {
	cases := []struct {
		name    string
		trigger string
		sql     string
		seq     int64
		table   string
		what    string
	}{
		{"one byte of a stored body", "snapshots_no_UPDATE",
			`UPDATE snapshots SET body = CAST(substr(body, 1, 100) || '~' || substr(body, 102) AS BLOB) WHERE seq = 4`,
			4, "snapshots", "body_sha256"},
		{"a view id", "snapshots_no_UPDATE", `UPDATE snapshots SET view_id = 'v-forged' WHERE seq = 2`, 2, "snapshots", "view_id"},
		{"a created_at", "snapshots_no_UPDATE", `UPDATE snapshots SET created_at = '2020-01-01T00:00:00Z' WHERE seq = 5`, 5, "snapshots", "created_at"},
		{"an event payload", "events_no_UPDATE", `UPDATE events SET payload = replace(payload, 'P-', 'Q-') WHERE seq = 3`, 3, "snapshots", "event itself was edited"},
		{"a deleted event", "events_no_DELETE", `DELETE FROM events WHERE seq = 3`, 4, "snapshots", "event 3 is missing"},
		{"a deleted snapshot", "snapshots_no_DELETE", `DELETE FROM snapshots WHERE seq = 6`, 6, "snapshots", "gone"},
		{"a primitive body", "primitive_revisions_no_UPDATE", `UPDATE primitive_revisions SET body = '{"name":"Dir"}'`, 7, "primitive_revisions", "body_sha256"},
		{"the identity index", "records_no_UPDATE", `UPDATE records SET sum = zeroblob(32) WHERE kind = 'check'`, 1, "snapshots", "record index"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tamperLedger(t)
			db := rawDB(t, path)
			mustExec(t, db, `DROP TRIGGER `+c.trigger)
			mustExec(t, db, c.sql)
			db.Close()
			verifyBroken(t, path, c.seq, c.table, c.what)
		})
	}
}

func TestRowBehindTheChainIsDetected(t *testing.T) {
	path := tamperLedger(t)
	db := rawDB(t, path)
	mustExec(t, db, `INSERT INTO snapshots (seq, proposition_id, view_id, body, body_sha256, canonical_sha256, created_at)
		SELECT 99, proposition_id, 'v-smuggled', body, body_sha256, canonical_sha256, created_at FROM snapshots WHERE seq = 1`)
	db.Close()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Verify(context.Background())
	var brk *ledger.Break
	if !errors.As(err, &brk) || brk.RowSeq != 99 || !strings.Contains(brk.What, "not recorded by any event") {
		t.Fatalf("smuggled row not found: %v", err)
	}
}
