package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/ledgertest"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newLedger inits and opens a ledger in a fresh schema.
func newLedger(t *testing.T) (*postgres.Ledger, string) {
	t.Helper()
	url := freshLedger(t)
	if err := postgres.Init(ctxT(t), url, postgres.Roles{}); err != nil {
		t.Fatal(err)
	}
	l, err := postgres.Open(ctxT(t), url, postgres.Options{Now: ledgertest.FixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, url
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(ctxT(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func sixViews(t *testing.T) []*warrant.View {
	var vs []*warrant.View
	for i := range 6 {
		v, err := warrant.DecodeView(snapshottest.SyntheticView(i/3, i%3))
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// seeded is a ledger with six snapshots and one graph revision (event 7).
func seeded(t *testing.T) (*postgres.Ledger, string) {
	l, url := newLedger(t)
	if _, err := l.Put(ctxT(t), sixViews(t)); err != nil {
		t.Fatal(err)
	}
	err := l.AppendPrimitives(ctxT(t), func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		return []ledger.PrimitiveRow{{ID: "file", NameFold: "file", Body: []byte(`{"name":"File"}`)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(ctxT(t)); err != nil {
		t.Fatalf("fresh ledger does not verify: %v", err)
	}
	return l, url
}

// TestAppendOnlyEnforcedByTheServer: even the superuser that owns the
// tables cannot UPDATE, DELETE or TRUNCATE them.
func TestAppendOnlyEnforcedByTheServer(t *testing.T) {
	_, url := seeded(t)
	c := connect(t, url)
	for _, q := range []string{
		`UPDATE snapshots SET view_id = 'x'`, `DELETE FROM snapshots`, `TRUNCATE snapshots CASCADE`,
		`UPDATE events SET hash = '\x00'`, `DELETE FROM events`, `TRUNCATE events`,
		`UPDATE records SET sum = '\x00'`, `DELETE FROM records`, `TRUNCATE records`,
		`DELETE FROM ledger_meta`, `TRUNCATE ledger_meta`, `DELETE FROM primitive_revisions`, `TRUNCATE primitive_revisions`,
		`DELETE FROM propositions`, `UPDATE assertion_text SET text_fold = ''`, `TRUNCATE assertion_text`,
	} {
		_, err := c.Exec(ctxT(t), q)
		if err == nil || !strings.Contains(err.Error(), "EWP_REFUSE_IMMUTABLE_RECORD") || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestRoles: Init's reader may only read (and its login opens read-only
// transactions), the writer may insert but not change or remove rows.
func TestRoles(t *testing.T) {
	l, url := seeded(t)
	admin := connect(t, url)
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano())
	reader, writer := "mcp_"+suffix, "ingest_"+suffix
	exec(t, admin, fmt.Sprintf(`CREATE ROLE %s LOGIN IN ROLE ewp_reader`, reader))
	exec(t, admin, fmt.Sprintf(`CREATE ROLE %s LOGIN IN ROLE ewp_writer`, writer))
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err == nil {
			c.Exec(context.Background(), fmt.Sprintf(`DROP OWNED BY %s, %s; DROP ROLE %s, %s`, reader, writer, reader, writer)) //nolint:errcheck // cleanup
			c.Close(context.Background())
		}
	})
	// A reader replica: reads work, every write is refused by the server.
	r, err := postgres.Open(ctxT(t), pgtest.WithUser(url, reader), postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, err := r.Latest(ctxT(t), "P-0000000"); err != nil || v == nil {
		t.Fatalf("reader cannot read: %v", err)
	}
	if _, err := r.Verify(ctxT(t)); err != nil {
		t.Fatalf("reader cannot verify: %v", err)
	}
	rc := connect(t, pgtest.WithUser(url, reader))
	for _, q := range []string{`INSERT INTO ledger_meta VALUES ('k', 'v')`, `SET default_transaction_read_only = off; INSERT INTO ledger_meta VALUES ('k', 'v')`} {
		if _, err := rc.Exec(ctxT(t), q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("reader: %s: %v", q, err)
		}
	}
	// The writer role ingests through the ledger, and cannot edit.
	w, err := postgres.Open(ctxT(t), pgtest.WithUser(url, writer), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AppendEvidence(ctxT(t), "P-0000000", warrant.Evidence{EvidenceID: "e-new", Polarity: warrant.Supports, Content: "c",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}); err != nil {
		t.Fatalf("writer cannot append: %v", err)
	}
	wc := connect(t, pgtest.WithUser(url, writer))
	for _, q := range []string{`UPDATE snapshots SET view_id = 'x'`, `DELETE FROM events`, `TRUNCATE records`, `ALTER TABLE snapshots DISABLE TRIGGER USER`} {
		if _, err := wc.Exec(ctxT(t), q); err == nil || !(strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), "must be owner")) {
			t.Errorf("writer: %s: %v", q, err)
		}
	}
	if _, err := l.Verify(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestInitIsIdempotentAndConcurrent: several processes may run Init on one
// database at once; every one succeeds and the ledger is laid out once.
func TestInitIsIdempotentAndConcurrent(t *testing.T) {
	url := freshLedger(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- postgres.Init(ctxT(t), url, postgres.Roles{}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Init: %v", err)
		}
	}
	l, err := postgres.Open(ctxT(t), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Put(ctxT(t), sixViews(t)); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Init(ctxT(t), url, postgres.Roles{}); err != nil {
		t.Fatalf("Init on a ledger with data: %v", err)
	}
	if rep, err := l.Verify(ctxT(t)); err != nil || rep.Snapshots != 6 {
		t.Fatalf("after re-Init: %+v %v", rep, err)
	}
}

func TestForeignDatabaseIsNotTouched(t *testing.T) {
	url := freshLedger(t)
	c := connect(t, url)
	exec(t, c, `CREATE TABLE notes (x text)`)
	err := postgres.Init(ctxT(t), url, postgres.Roles{})
	if err == nil || !strings.Contains(err.Error(), "not an EWP ledger") {
		t.Fatalf("Init on another program's database: %v", err)
	}
	var n int
	if err := c.QueryRow(ctxT(t), `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the foreign database was changed: %d tables, %v", n, err)
	}
	if _, err := postgres.Open(ctxT(t), url, postgres.Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "not an EWP ledger") {
		t.Fatalf("Open: %v", err)
	}
}

func TestSchemaVersionMismatch(t *testing.T) {
	_, url := newLedger(t)
	c := connect(t, url)
	exec(t, c, `ALTER TABLE ledger_meta DISABLE TRIGGER USER`)
	exec(t, c, `UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'`)
	_, err := postgres.Open(ctxT(t), url, postgres.Options{})
	if !errors.Is(err, ledger.ErrSchemaVersion) || !strings.Contains(err.Error(), "schema_version 99") {
		t.Fatalf("open: %v", err)
	}
}

// tamper edits the seeded ledger behind its triggers, as an attacker with
// the table owner's rights could, and expects Verify to name the event.
func TestTamperIsDetected(t *testing.T) {
	cases := []struct {
		name, table, sql string
		seq              int64
		brkTable, what   string
	}{
		{"one byte of a stored body", "snapshots", `UPDATE snapshots SET body = overlay(body placing '~' from 100 for 1) WHERE seq = 4`, 4, "snapshots", "body_sha256"},
		{"a view id", "snapshots", `UPDATE snapshots SET view_id = 'v-forged' WHERE seq = 2`, 2, "snapshots", "view_id"},
		{"a created_at", "snapshots", `UPDATE snapshots SET created_at = '2020-01-01T00:00:00Z' WHERE seq = 5`, 5, "snapshots", "created_at"},
		{"an event payload", "events", `UPDATE events SET payload = replace(payload, 'P-', 'Q-') WHERE seq = 3`, 3, "snapshots", "event itself was edited"},
		{"a deleted event", "events", `DELETE FROM events WHERE seq = 3`, 4, "snapshots", "event 3 is missing"},
		{"a deleted snapshot", "snapshots", `DELETE FROM snapshots WHERE seq = 6`, 6, "snapshots", "gone"},
		{"a primitive body", "primitive_revisions", `UPDATE primitive_revisions SET body = '{"name":"Dir"}'`, 7, "primitive_revisions", "body_sha256"},
		{"the identity index", "records", `UPDATE records SET sum = '\x00' WHERE kind = 'check'`, 0, "records", "other content"},
		{"a planted index row", "records", `INSERT INTO records SELECT proposition_id, kind, 'planted', sum, view_id FROM records LIMIT 1`, 0, "records", "planted"},
		{"a search row", "assertion_text", `UPDATE assertion_text SET text_fold = 'forged'`, 0, "assertion_text", "search index"},
		{"an extra ledger_meta row", "ledger_meta", `INSERT INTO ledger_meta VALUES ('owner', 'mallory')`, 0, "ledger_meta", "owner"},
		{"a row behind the chain", "snapshots", `INSERT INTO snapshots SELECT 99, proposition_id, 'v-smuggled', body, body_sha256, canonical_sha256, created_at FROM snapshots WHERE seq = 1`, 0, "snapshots", "not recorded by any event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, url := seeded(t)
			conn := connect(t, url)
			exec(t, conn, `ALTER TABLE `+c.table+` DISABLE TRIGGER USER`)
			exec(t, conn, c.sql)
			exec(t, conn, `ALTER TABLE `+c.table+` ENABLE TRIGGER USER`)
			rep, err := l.Verify(ctxT(t))
			var brk *ledger.Break
			if !errors.As(err, &brk) || rep.OK() {
				t.Fatalf("verify passed an edited ledger: %+v %v", rep, err)
			}
			if brk.Seq != c.seq || brk.Table != c.brkTable || !strings.Contains(brk.What, c.what) {
				t.Fatalf("verify named %q, want event %d in %s mentioning %q", brk.Error(), c.seq, c.brkTable, c.what)
			}
			t.Logf("verify says: %v", brk)
		})
	}
}

// TestWritersRefuseABrokenTail: a write never extends a chain whose last
// link is broken, whose newest row is not the chain's, or whose triggers
// are off.
func TestWritersRefuseABrokenTail(t *testing.T) {
	cases := []struct{ name, sql string }{
		{"last event edited", `ALTER TABLE events DISABLE TRIGGER USER; UPDATE events SET payload = payload || ' ' WHERE seq = 7; ALTER TABLE events ENABLE TRIGGER USER`},
		{"last event removed", `ALTER TABLE events DISABLE TRIGGER USER; DELETE FROM events WHERE seq = 7; ALTER TABLE events ENABLE TRIGGER USER`},
		{"triggers disabled", `ALTER TABLE snapshots DISABLE TRIGGER USER`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, url := seeded(t)
			exec(t, connect(t, url), c.sql)
			v, _ := warrant.DecodeView([]byte(strings.ReplaceAll(ledgertest.ViewP, "P-db", "P-new")))
			_, err := l.Put(ctxT(t), []*warrant.View{v})
			if !errors.Is(err, postgres.ErrBrokenChain) {
				t.Fatalf("put on a broken tail: %v", err)
			}
			if _, err := l.Latest(ctxT(t), "P-new"); err == nil {
				t.Fatal("the refused write was stored")
			}
		})
	}
}

// TestReadOnlyHandleCannotWrite: a handle opened ReadOnly runs read-only
// transactions on the server, so even a role that may write cannot
// through it.
func TestReadOnlyHandleCannotWrite(t *testing.T) {
	_, url := seeded(t)
	r, err := postgres.Open(ctxT(t), url, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Pool().Exec(ctxT(t), `INSERT INTO ledger_meta VALUES ('k', 'v')`)
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Fatalf("insert through a read-only handle: %v", err)
	}
}

// TestWaitingWriterTimesOutWithAReason: a writer that cannot get the chain
// within its statement timeout fails saying why, and writes nothing.
func TestWaitingWriterTimesOutWithAReason(t *testing.T) {
	_, url := seeded(t)
	holder := connect(t, url)
	tx, err := holder.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctxT(t)) //nolint:errcheck // test
	if _, err := tx.Exec(ctxT(t), `SELECT pg_advisory_xact_lock($1)`, int64(0x6577_7000_0000_0001)); err != nil {
		t.Fatal(err)
	}
	w, err := postgres.Open(ctxT(t), url, postgres.Options{Settings: pgurl.Settings{StatementTimeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v, _ := warrant.DecodeView([]byte(ledgertest.ViewP))
	_, err = w.Put(ctxT(t), []*warrant.View{v})
	var le *ledger.Error
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "another writer held the chain") {
		t.Fatalf("put while the chain is held: %v", err)
	}
}

// TestInitOnManyDatabasesAtOnce: roles belong to the server, so Init on
// several databases at once races to create them; every Init succeeds.
func TestInitOnManyDatabasesAtOnce(t *testing.T) {
	roles := postgres.Roles{Reader: fmt.Sprintf("r_race_%d", os.Getpid()), Writer: fmt.Sprintf("w_race_%d", os.Getpid()), Server: fmt.Sprintf("s_race_%d", os.Getpid())}
	var urls []string
	for range 4 {
		urls = append(urls, pgtest.DB(t)) // databases: Init's own lock is per database
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(urls))
	for _, u := range urls {
		wg.Go(func() { errs <- postgres.Init(ctxT(t), u, roles) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Init racing on roles: %v", err)
		}
	}
}
