package ledgerstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to damage a PostgreSQL ledger
)

const supported = `{"proposition_id":"P","view_id":"v1","evidence":[{"evidence_id":"e1","polarity":"supports",` +
	`"content":"seen","observed_at":"2026-09-01T00:00:00Z","source":{"source_id":"s1","lineage_id":"L1","origin_type":"turn",` +
	`"origin_locator":"loc:1","snapshot_id":"snap:1","content_hash":"sha256:1","observed_at":"2026-09-01T00:00:00Z"}}]}`

// damagedLedger stores P, then edits its stored polarity behind the
// ledger's back: the update trigger dropped, the body rewritten.
func damagedLedger(t *testing.T, kind string) string {
	t.Helper()
	return editedLedger(t, kind,
		`UPDATE snapshots SET body = CAST(replace(CAST(body AS TEXT), '"supports"', '"sideways"') AS BLOB)`,
		`UPDATE snapshots SET body = convert_to(replace(convert_from(body, 'UTF8'), '"supports"', '"sideways"'), 'UTF8')`)
}

// editedLedger stores P, then runs an UPDATE of its snapshot row behind
// the ledger's back (the update trigger dropped): sqliteSQL or pgSQL by
// kind.
func editedLedger(t *testing.T, kind, sqliteSQL, pgSQL string) string {
	t.Helper()
	l, dsn := ledgerstore.FreshLedger(t, kind)
	v, err := warrant.DecodeView([]byte(supported))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(context.Background(), []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	driver, source, damage := "sqlite", "file:"+dsn, []string{`DROP TRIGGER snapshots_no_UPDATE`, sqliteSQL}
	if kind == "postgres" {
		driver, source, damage = "pgx", dsn, []string{`DROP TRIGGER snapshots_no_change ON snapshots`, pgSQL}
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range damage {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return dsn
}

// A stored snapshot the kernel refuses is the ledger's fault, not the
// caller's: warrant_now answers EWP_INTERNAL_ERROR telling the operator
// to verify the ledger, never EWP_REFUSE_INVALID_EVIDENCE_VIEW.
func TestDamagedSnapshotIsInternal(t *testing.T) {
	ledgerstore.EachStore(t, testDamagedSnapshotIsInternal)
}

func testDamagedSnapshotIsInternal(t *testing.T, kind string) {
	l, err := store.Open(context.Background(), damagedLedger(t, kind), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := mcp.New(ledgerstore.New(l))
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now",` +
		`"arguments":{"proposition_id":"P","evaluated_at":"2026-09-21T00:00:00Z"}}}` + "\n"
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out, false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, `{\"error\":\"`+mcp.CodeInternal+`\"`) || !strings.Contains(got, "ewp-ingest verify --db") {
		t.Fatalf("a damaged ledger blamed on the caller: %s", got)
	}
}
