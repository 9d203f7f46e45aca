package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// editCarefully runs edits the way a careful tamperer would: drop the
// append-only triggers, edit, and put the very same triggers back, so the
// schema alone shows nothing.
func editCarefully(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		t.Fatal(err)
	}
	var names, ddl []string
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		names, ddl = append(names, n), append(ddl, s)
	}
	rows.Close()
	for _, n := range names {
		mustExec(t, db, `DROP TRIGGER `+n)
	}
	for _, s := range stmts {
		mustExec(t, db, s)
	}
	for _, s := range ddl {
		mustExec(t, db, s)
	}
}

// wantBreak verifies the file and expects a break in table whose message
// holds what.
func wantBreak(t *testing.T, path, table, what string) *ledger.Break {
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
	if brk.Table != table || !strings.Contains(brk.Error(), what) {
		t.Fatalf("verify said %q, want a break in %s mentioning %q", brk.Error(), table, what)
	}
	t.Logf("verify says: %v", brk)
	return brk
}

// Edits that leave the chain itself intact: verify must compare every
// table with what the chain's snapshots derive, and the schema with what
// this build creates.
func TestVerifyChecksEveryTable(t *testing.T) {
	cases := []struct {
		name, table, what string
		careful           bool // triggers put back after the edit
		sql               []string
	}{
		{"history cut off at the end", "records", "derived from no stored snapshot", true, []string{
			`DELETE FROM events WHERE seq >= 6`, `DELETE FROM snapshots WHERE seq = 6`, `DELETE FROM primitive_revisions`}},
		{"append-only triggers dropped", "sqlite_master", "trigger events_no_UPDATE is missing", false, []string{
			`DROP TRIGGER snapshots_no_DELETE`, `DROP TRIGGER events_no_UPDATE`}},
		{"a trigger replaced by a harmless one", "sqlite_master", "trigger events_no_DELETE differs", false, []string{
			`DROP TRIGGER events_no_DELETE`, `CREATE TRIGGER events_no_DELETE BEFORE DELETE ON events BEGIN SELECT 1; END`}},
		{"an extra index", "sqlite_master", "index records_by_view is not part of the ledger schema", false, []string{
			`CREATE INDEX records_by_view ON records (view_id)`}},
		{"an extra table", "sqlite_master", "table notes is not part of the ledger schema", false, []string{
			`CREATE TABLE notes (x)`}},
		{"a fake record index row", "records", `"e-fake"`, false, []string{
			`INSERT INTO records VALUES ('P-0000000', 'evidence', 'e-fake', zeroblob(32), 'v-never')`}},
		{"a record index row of an unknown proposition", "records", `"P-ghost"`, false, []string{
			`INSERT INTO records VALUES ('P-ghost', 'evidence', 'e-1', zeroblob(32), 'v-never')`}},
		{"a record index row deleted", "snapshots", `record index lacks check "k-1-1"`, true, []string{
			`DELETE FROM records WHERE record_id = 'k-1-1'`}},
		{"a record index row's view rewritten", "snapshots", "record index holds other content", true, []string{
			`UPDATE records SET view_id = 'v-other' WHERE record_id = 'e-0-0'`}},
		{"a search index row inserted", "assertion_fts", `"a-fake"`, false, []string{
			`INSERT INTO assertion_fts (text, proposition_id, assertion_id) VALUES ('planted text', 'P-0000001', 'a-fake')`}},
		{"a search index row of an unknown proposition", "assertion_fts", `"P-ghost"`, false, []string{
			`INSERT INTO assertion_fts (text, proposition_id, assertion_id) VALUES ('planted text', 'P-ghost', 'a-0')`}},
		{"a search index row duplicated", "assertion_fts", `"a-1"`, false, []string{
			`INSERT INTO assertion_fts (text, proposition_id, assertion_id) SELECT text, proposition_id, assertion_id FROM assertion_fts WHERE assertion_id = 'a-1'`}},
		{"a search index row deleted", "snapshots", `search index lacks assertion "a-0"`, false, []string{
			`DELETE FROM assertion_fts WHERE assertion_id = 'a-0'`}},
		{"a search index text rewritten", "snapshots", `other text for assertion "a-1"`, false, []string{
			`UPDATE assertion_fts SET text = 'something else' WHERE assertion_id = 'a-1'`}},
		{"an extra ledger_meta row", "ledger_meta", `"owner"`, false, []string{
			`INSERT INTO ledger_meta VALUES ('owner', 'mallory')`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tamperLedger(t)
			db := rawDB(t, path)
			if c.careful {
				editCarefully(t, db, c.sql...)
			} else {
				for _, q := range c.sql {
					mustExec(t, db, q)
				}
			}
			db.Close()
			wantBreak(t, path, c.table, c.what)
		})
	}
}

// A ledger that is intact reports its head.
func TestVerifyReportsHead(t *testing.T) {
	path := tamperLedger(t)
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Head(context.Background())
	if err != nil || rep.Head != h || h.Seq != 7 || len(h.Hash) != 64 {
		t.Fatalf("verified head %+v, ledger head %+v %v", rep.Head, h, err)
	}
}
