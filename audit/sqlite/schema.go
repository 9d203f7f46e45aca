package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/ewp-go/ewp/internal/sqlitefile"
)

// SchemaVersion is the layout this build reads and writes; a log of
// another version is refused rather than guessed at: no release has
// shipped, so no log of an earlier version exists outside this
// repository's history and none is upgraded.
const SchemaVersion = 3

// appendOnly are the tables the database itself refuses to UPDATE or
// DELETE, through triggers; Verify checks that the triggers are in place.
var appendOnly = []string{"audit_meta", tableBodies, tableDecisions, tableApprovals, tableUses, "events"}

// tableBodies holds the decisions' JSON bodies, a row per run of
// decisions one commit recorded together.
const tableBodies = "decision_bodies"

const schemaDDL = `
CREATE TABLE audit_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- The decisions' JSON bodies, written together: the bodies of n decisions
-- a commit recorded (a commit writes one row, or several of at most 256
-- KiB each), their chain events consecutive from first_event and their
-- seqs from first_seq, each body followed by a newline, which JSON never
-- holds unescaped; head is the hash of the last one's event. A few large
-- values per commit are a fraction of the work of a row per body: the
-- server's hot path. first_id and last_id are the least and greatest of
-- the row's in-order decision_ids (each greater than every in-order id
-- before it in the chain), NULL when it holds none: in-order ids grow
-- along the chain, so the rows' ranges are disjoint and ordered, and a
-- decision without a decisions row is found by its id through the one
-- row whose range holds it (the partial index).
CREATE TABLE decision_bodies (
	first_event INTEGER PRIMARY KEY,
	first_seq   INTEGER NOT NULL,
	n           INTEGER NOT NULL,
	head        BLOB NOT NULL,
	first_id    TEXT,
	last_id     TEXT,
	bodies      BLOB NOT NULL
);
CREATE INDEX decision_bodies_ids ON decision_bodies (first_id) WHERE first_id IS NOT NULL;

-- A row only for a special decision, one that a lookup by something else
-- than its in-order id needs or that its id alone cannot find: an id out
-- of order, an idempotency key, a REQUIRE_CONFIRMATION outcome (the
-- pending inbox) or an approval presented. Every other decision has only
-- its body, and its chain entry is computed from it. seq is the
-- decision's number in recording order (as the chain numbers it; listings
-- and anyone following the log with After walk it, so a decision recorded
-- late is never skipped). The row holds the columns lookups and filters
-- need, each derived from the body (Verify checks that they agree), and
-- the decision's chain entry: its event and
-- hash = sha256(hash of event - 1 || payload), the payload being the
-- canonical JSON of the decision's row (see auditchain.DecisionRow), which
-- Verify rebuilds from the body. idem_key is NULL when the caller gave
-- none; the unique index holds only keyed decisions.
CREATE TABLE decisions (
	seq            INTEGER PRIMARY KEY,
	event          INTEGER NOT NULL,
	decision_id    TEXT NOT NULL UNIQUE,
	time_ns        INTEGER NOT NULL,
	outcome        TEXT NOT NULL,
	proposition_id TEXT NOT NULL,
	credential     TEXT NOT NULL,
	idem_key       TEXT,
	approval_id    TEXT NOT NULL,
	hash           BLOB NOT NULL
);
-- Every index costs every Record on the server's hot path; this table
-- and its indexes are written only for special decisions, a few of a
-- commit's at most. Filters by time, proposition or outcome scan the
-- bodies in recording order: they are an operator's queries, not the
-- server's.
CREATE UNIQUE INDEX decisions_idem ON decisions (credential, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX decisions_pending ON decisions (seq) WHERE outcome = 'REQUIRE_CONFIRMATION';
CREATE INDEX decisions_approval ON decisions (approval_id) WHERE approval_id <> '';

-- An operator's answer to one decision: a decision is answered once.
CREATE TABLE approvals (
	seq         INTEGER PRIMARY KEY,
	approval_id TEXT NOT NULL UNIQUE,
	decision_id TEXT NOT NULL UNIQUE,
	verdict     TEXT NOT NULL,
	created_ns  INTEGER NOT NULL,
	body        BLOB NOT NULL,
	body_sha256 BLOB NOT NULL
);

-- The consumption of a single-use approval. UNIQUE (approval_id) is what
-- makes it atomic: of concurrent consumers, whichever process they are
-- in, exactly one INSERT succeeds.
CREATE TABLE approval_uses (
	seq         INTEGER PRIMARY KEY,
	approval_id TEXT NOT NULL UNIQUE,
	used_by     TEXT NOT NULL,
	used_ns     INTEGER NOT NULL
);

-- The chain entries of approvals and uses (a decision's is in its own
-- row): hash = sha256(prev_hash || payload), payload being the canonical
-- JSON of the row it records (see chain.go). Event numbers are shared
-- with the decisions: together they number 1, 2, 3, … Rows are written in
-- seq order and their events in the same order, so per table row_seq
-- strictly increases along the chain; Verify relies on that instead of
-- an index on (tbl, row_seq).
CREATE TABLE events (
	seq       INTEGER PRIMARY KEY,
	tbl       TEXT NOT NULL,
	row_seq   INTEGER NOT NULL,
	payload   TEXT NOT NULL,
	prev_hash BLOB NOT NULL,
	hash      BLOB NOT NULL
);
`

// triggers returns the append-only triggers by name, each with its SQL as
// sqlite_master keeps it, so Verify can compare them exactly.
// With agentTables, those of the tables added with agent identities too.
func triggers(agentTables bool) map[string]string {
	m := map[string]string{}
	tables := appendOnly
	if agentTables {
		tables = append(slices.Clone(appendOnly), agentAppendOnly...)
	}
	for _, t := range tables {
		for _, op := range []string{"UPDATE", "DELETE"} {
			m[t+"_no_"+op] = triggerSQL(t, op)
		}
	}
	return m
}

// triggerSQL is the trigger refusing op on table t.
func triggerSQL(t, op string) string {
	name := t + "_no_" + op
	return fmt.Sprintf("CREATE TRIGGER %s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; %s on %s is refused'); END",
		name, op, t, op, t)
}

// createSchema lays out a new log in one transaction. Two processes may
// race to create the same file; the second finds the schema and leaves it.
func createSchema(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	fresh, err := sqlitefile.Unclaimed(ctx, tx, "audit_meta")
	if errors.Is(err, sqlitefile.ErrForeign) {
		return errors.New("the file is an SQLite database but not a decision log (it has other tables and no audit_meta); is --audit pointing at the ledger? The log is a file of its own")
	}
	if err != nil || !fresh {
		return err
	}
	if err := layout(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// layout creates every table, index and trigger of a new log and records
// the version, inside tx.
func layout(ctx context.Context, tx *sql.Tx) error {
	ddl := schemaDDL
	for _, sql := range triggers(false) {
		ddl += sql + ";\n"
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create decision log schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_meta (key, value) VALUES ('schema_version', ?)`, strconv.Itoa(SchemaVersion)); err != nil {
		return err
	}
	return layoutAgents(ctx, tx)
}

// ErrSchemaVersion is wrapped by the error for a log of another layout.
var ErrSchemaVersion = errors.New("decision log schema version mismatch")

func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&v)
	if err != nil {
		return fmt.Errorf("%s is not a decision log (no schema_version: %v); point --audit at the log ewp-mcp writes (by default LEDGER.audit beside the ledger)", path, err)
	}
	if v == strconv.Itoa(SchemaVersion) {
		return nil
	}
	return fmt.Errorf("%w: %s has schema_version %s, this build reads only version %d and converts no other (versions 1 and 2 were development formats that no release wrote); read it with the build that wrote it, or start a new log", ErrSchemaVersion, path, v, SchemaVersion)
}
