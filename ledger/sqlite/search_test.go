package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
)

// searchLedger stores a proposition with non-ASCII id and text.
func searchLedger(t *testing.T) *sqlite.Ledger {
	t.Helper()
	l := newLedger(t)
	r := strings.NewReplacer(`"P-db"`, `"P-ÄPFEL-ΩMEGA"`, "The production database runs PostgreSQL 13.", "Die Straße nach ÖSTERREICH ist ΣΟΦΙΑ.")
	put(t, l, decode(t, viewP), decode(t, r.Replace(viewP)))
	return l
}

func listIDs(t *testing.T, l *sqlite.Ledger, q string) []string {
	t.Helper()
	got, err := l.List(context.Background(), q, 10)
	if err != nil {
		t.Fatalf("List(%q): %v", q, err)
	}
	ids := []string{}
	for _, s := range got {
		ids = append(ids, s.PropositionID)
	}
	return ids
}

// Ids and texts are found case-insensitively under Unicode case folding,
// the same fold on the stored side and on the query.
func TestListFoldsUnicodeCase(t *testing.T) {
	l := searchLedger(t)
	for _, q := range []string{"ÄPFEL", "äpfel", "ΩMEGA", "ωmega", "p-äpfel-ωmega", "Äp", "ω", // the id
		"straße", "STRASSE", "strasse", "österreich", "Österreich", "σοφια", "ΣΟΦΙΑ.", "ss"} { // the text
		if ids := listIDs(t, l, q); len(ids) != 1 || ids[0] != "P-ÄPFEL-ΩMEGA" {
			t.Errorf("List(%q) = %v, want [P-ÄPFEL-ΩMEGA]", q, ids)
		}
	}
	if ids := listIDs(t, l, "postgresql"); len(ids) != 1 || ids[0] != "P-db" {
		t.Errorf("ASCII search broke: %v", ids)
	}
}

// A NUL in the query is searched like any character, never an internal
// error.
func TestListNULQuery(t *testing.T) {
	l := searchLedger(t)
	for _, q := range []string{"\x00", "P\x00", "abc\x00def", "\x00\x00\x00"} {
		if ids := listIDs(t, l, q); len(ids) != 0 {
			t.Errorf("List(%q) = %v, want none", q, ids)
		}
	}
	nul := decode(t, strings.NewReplacer(`"P-db"`, `"P-nul"`, "The production", "The\\u0000production").Replace(viewP))
	put(t, l, nul)
	if ids := listIDs(t, l, "the\x00PRODUCTION"); len(ids) != 1 || ids[0] != "P-nul" {
		t.Errorf("a stored NUL is not found: %v", ids)
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A version 1 ledger made before the search index held folded text (no
// search_text row in ledger_meta) still opens, verifies, grows and is
// searched case-insensitively; its index keeps the text as given. (A query
// whose folded form is ASCII uses that unfolded index, so there "strasse"
// does not find "Straße"; see metaSearchText.)
func TestListOnLedgerWithUnfoldedIndex(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	path := l.Path()
	l.Close()
	db := rawDB(t, path)
	editCarefully(t, db, `DELETE FROM ledger_meta WHERE key = 'search_text'`)
	db.Close()
	l, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := strings.NewReplacer(`"P-db"`, `"P-ÄPFEL"`, "The production database runs PostgreSQL 13.", "Die Straße nach ÖSTERREICH.")
	put(t, l, decode(t, viewP), decode(t, r.Replace(viewP)))
	for q, want := range map[string]string{"äpfel": "P-ÄPFEL", "österreich": "P-ÄPFEL", "POSTGRESQL": "P-db", "ÖSTER": "P-ÄPFEL", "ö": "P-ÄPFEL"} {
		if ids := listIDs(t, l, q); len(ids) != 1 || ids[0] != want {
			t.Errorf("List(%q) = %v, want [%s]", q, ids, want)
		}
	}
	db = rawDB(t, path)
	var text string
	db.QueryRow(`SELECT text FROM assertion_fts WHERE proposition_id = 'P-ÄPFEL'`).Scan(&text)
	db.Close()
	if text != "Die Straße nach ÖSTERREICH." {
		t.Fatalf("an unfolded index got %q", text)
	}
	if _, err := l.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// A search index row whose proposition has no snapshot (planted) is
// skipped, not an error for every search that hits it.
func TestListSkipsStrayIndexRow(t *testing.T) {
	l := searchLedger(t)
	db := rawDB(t, l.Path())
	mustExec(t, db, `INSERT INTO assertion_fts (text, proposition_id, assertion_id) VALUES ('the production database runs', 'P-ghost', 'a1')`)
	db.Close()
	for _, q := range []string{"production database", "pr", "PRODUCTION"} {
		if ids := listIDs(t, l, q); len(ids) != 1 || ids[0] != "P-db" {
			t.Errorf("List(%q) = %v, want [P-db]", q, ids)
		}
	}
}
