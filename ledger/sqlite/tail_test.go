package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// A writer refuses to extend a chain that is visibly broken at its tail,
// and says to run verify; nothing is written.
func TestWriteRefusesBrokenTail(t *testing.T) {
	cases := []struct {
		name, what string
		careful    bool // triggers put back after the edit
		sql        []string
	}{
		{"last event edited", "last event 7: hash is not sha256", true, []string{
			`UPDATE events SET payload = replace(payload, '"file"', '"dir"') WHERE seq = 7`}},
		{"previous event's hash edited", "prev_hash does not match the hash of event 6", true, []string{
			`UPDATE events SET hash = zeroblob(32) WHERE seq = 6`}},
		{"newest snapshot's body edited", "snapshot 6's body does not match", true, []string{
			`UPDATE snapshots SET body = CAST(replace(CAST(body AS TEXT), 'log line', 'LOG LINE') AS BLOB) WHERE seq = 6`,
			`DELETE FROM events WHERE seq = 7`, `DELETE FROM primitive_revisions`}},
		{"newest snapshot's view id edited", "view_id", true, []string{
			`UPDATE snapshots SET view_id = 'v-forged' WHERE seq = 6`,
			`DELETE FROM events WHERE seq = 7`, `DELETE FROM primitive_revisions`}},
		{"a trigger dropped", "trigger snapshots_no_DELETE is missing", false, []string{`DROP TRIGGER snapshots_no_DELETE`}},
		{"a trigger added", "trigger extra is not part", false, []string{`CREATE TRIGGER extra AFTER INSERT ON snapshots BEGIN SELECT 1; END`}},
		{"a snapshot smuggled behind the chain", "snapshot 99", false, []string{`INSERT INTO snapshots (seq, proposition_id, view_id, body, body_sha256, canonical_sha256, created_at)
			SELECT 99, proposition_id, 'v-smuggled', body, body_sha256, canonical_sha256, created_at FROM snapshots WHERE seq = 1`}},
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
			l, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			before, err := l.Head(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Put(context.Background(), []*warrant.View{decode(t, viewP)})
			if !errors.Is(err, ledger.ErrBrokenChain) || !strings.Contains(err.Error(), "ewp-ingest verify") || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("put on a broken tail: %v", err)
			}
			if after, err := l.Head(context.Background()); err != nil || after != before {
				t.Fatalf("head moved from %v to %v (%v)", before, after, err)
			}
		})
	}
}
