package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/internal/sqlitefile"
)

// SchemaVersion is the layout this build reads and writes. A ledger with
// another version is refused rather than guessed at.
const SchemaVersion = 1

// appendOnly are the tables whose rows are facts: the database refuses
// UPDATE and DELETE on them through triggers, so even a buggy writer (or a
// person with the sqlite3 shell and no intent to tamper) cannot rewrite
// history. The FTS index is derived from snapshots and is not among them:
// SQLite allows no triggers on virtual tables, and FTS5 rewrites its own
// shadow tables while merging.
var appendOnly = []string{"ledger_meta", "snapshots", "records", "events", "primitive_revisions"}

const schemaDDL = `
CREATE TABLE ledger_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per stored snapshot. body is the stored form (warrant.Encode);
-- body_sha256 is its identity for re-puts; canonical_sha256 covers the §8
-- canonical form, which is what round trips must preserve.
CREATE TABLE snapshots (
	seq              INTEGER PRIMARY KEY,
	proposition_id   TEXT NOT NULL,
	view_id          TEXT NOT NULL,
	body             BLOB NOT NULL,
	body_sha256      BLOB NOT NULL,
	canonical_sha256 BLOB NOT NULL,
	created_at       TEXT NOT NULL,
	UNIQUE (proposition_id, view_id)
);
CREATE INDEX snapshots_latest ON snapshots (proposition_id, seq);

-- Record identity index (§9): the first content stored under each id of a
-- proposition, so an identity check is a point lookup, never a reload.
CREATE TABLE records (
	proposition_id TEXT NOT NULL,
	kind           TEXT NOT NULL,
	record_id      TEXT NOT NULL,
	sum            BLOB NOT NULL,
	view_id        TEXT NOT NULL,
	PRIMARY KEY (proposition_id, kind, record_id)
) WITHOUT ROWID;

-- The hash chain: hash = sha256(prev_hash || payload), payload being the
-- canonical description of the row it records (see chain.go).
CREATE TABLE events (
	seq       INTEGER PRIMARY KEY,
	tbl       TEXT NOT NULL,
	row_seq   INTEGER NOT NULL,
	payload   TEXT NOT NULL,
	prev_hash BLOB NOT NULL,
	hash      BLOB NOT NULL,
	UNIQUE (tbl, row_seq)
);

-- Concept-graph revisions, opaque to the ledger: the grounding package
-- owns the meaning of body. The current graph is the latest revision of
-- each primitive_id.
CREATE TABLE primitive_revisions (
	seq          INTEGER PRIMARY KEY,
	primitive_id TEXT NOT NULL,
	name_fold    TEXT NOT NULL,
	body         BLOB NOT NULL,
	created_at   TEXT NOT NULL
);
CREATE INDEX primitive_revisions_id ON primitive_revisions (primitive_id, seq);

-- Trigram tokens make "contains" queries index lookups (see List).
CREATE VIRTUAL TABLE assertion_fts USING fts5(
	text, proposition_id UNINDEXED, assertion_id UNINDEXED, tokenize = 'trigram'
);
`

func triggersDDL() string {
	var s string
	for _, t := range appendOnly {
		for _, op := range []string{"UPDATE", "DELETE"} {
			s += fmt.Sprintf("CREATE TRIGGER %s_no_%s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the ledger is append-only; %s on %s is refused'); END;\n",
				t, op, op, t, op, t)
		}
	}
	return s
}

// createSchema lays out a new ledger in one transaction.
func createSchema(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	// Two writers may race to create the same missing file; the one that
	// takes the write lock second finds the schema and leaves it alone. A
	// database with other tables is some other program's: never touch it.
	fresh, err := sqlitefile.Unclaimed(ctx, tx, "ledger_meta")
	if errors.Is(err, sqlitefile.ErrForeign) {
		return errors.New("the file is an SQLite database but not an EWP ledger (it has other tables and no ledger_meta); point --db at a ledger or a new file")
	}
	if err != nil || !fresh {
		return err
	}
	if _, err := tx.ExecContext(ctx, schemaDDL+triggersDDL()); err != nil {
		return fmt.Errorf("create ledger schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?), (?, ?)`,
		strconv.Itoa(SchemaVersion), metaSearchText, searchTextFolded); err != nil {
		return err
	}
	return tx.Commit()
}

// metaSearchText says what the search index holds. A ledger created since
// search folds Unicode case has it set to searchTextFolded: assertion text
// is indexed folded (see fold), and every write keeps it so. A version 1
// ledger created before has no such row and keeps indexing the text as
// given; search still works there (it folds the scanned text instead, and
// uses the trigram index only for queries whose folded form is ASCII, which
// SQLite's trigram folding finds in unfolded text, except the few full
// foldings that change length: "strasse" does not find "Straße" there). The
// layout is otherwise the same, so this needs no new SchemaVersion and old
// ledgers open, verify and grow as before; rebuilding an old index folded
// is left to a future explicit migration.
const (
	metaSearchText   = "search_text"
	searchTextFolded = "casefold"
)

// readSearchText reports whether the ledger's search index holds folded
// text.
func readSearchText(ctx context.Context, db *sql.DB) (bool, error) {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM ledger_meta WHERE key = ?`, metaSearchText).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return v == searchTextFolded, err
}

// checkSchema refuses files that are not ledgers of this version, with a
// message that says what to do.
func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM ledger_meta WHERE key = 'schema_version'`).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table") {
		return fmt.Errorf("cannot read ledger %s: %w", path, err)
	}
	if err != nil {
		return fmt.Errorf("%s is not an EWP ledger (no schema_version: %v); point --db at a ledger created by ewp-ingest", path, err)
	}
	if v != strconv.Itoa(SchemaVersion) {
		return fmt.Errorf("%w: %s has schema_version %s, this build reads version %d; use the ewp release that wrote it or migrate the ledger", ledger.ErrSchemaVersion, path, v, SchemaVersion)
	}
	return nil
}
