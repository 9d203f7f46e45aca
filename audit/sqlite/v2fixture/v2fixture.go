// Package v2fixture writes decision logs in SQLite schema version 2, as
// the ewp releases before schema 3 wrote them (a decisions row for every
// decision, its body in its commit's decision_bodies row, events only for
// approvals and uses), so that the tests of sqlite.Upgrade start from a
// real version 2 log. It is for tests only: nothing in a release imports
// it.
//
// The schema is version 2's text, verbatim, and the rows are written the
// way version 2's writer wrote them, one transaction per write (a Record
// of several decisions is one commit, its bodies one decision_bodies row),
// with the payloads and link hash of package auditchain.
package v2fixture

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/internal/sqlitefile" // also registers the "sqlite" driver
)

// DDL is version 2's schema, as version 2's schema.go created it.
const DDL = `
CREATE TABLE audit_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- The decisions' JSON bodies, written together: the bodies of n decisions
-- a commit recorded (a commit writes one row, or several of at most 256
-- KiB each), their chain events consecutive from first_event and their
-- rows from first_seq, each body followed by a newline, which JSON never
-- holds unescaped; head is the hash of the last one's event. A few large
-- values per commit are a fraction of the work of a row per body: the
-- server's hot path.
CREATE TABLE decision_bodies (
	first_event INTEGER PRIMARY KEY,
	first_seq   INTEGER NOT NULL,
	n           INTEGER NOT NULL,
	head        BLOB NOT NULL,
	bodies      BLOB NOT NULL
);

-- One row per recorded gate call, numbered in recording order (seq, the
-- rowid: listings and anyone following the log with After walk it, so a
-- decision recorded late is never skipped): the columns lookups and
-- filters need, each derived from the body (Verify checks that they
-- agree), and the decision's chain entry: its event and
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
-- Every index costs every Record on the server's hot path: besides the
-- table, only decision_id's is written for every decision (both grow
-- at their end); the partial ones hold only the decisions that asked for
-- or presented an approval or gave a key. Filters by time, proposition or
-- outcome scan in recording order: they are an operator's queries, not
-- the server's.
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

// Triggers are version 2's append-only triggers, as sqlite_master kept
// them.
var Triggers = []string{
	`CREATE TRIGGER audit_meta_no_UPDATE BEFORE UPDATE ON audit_meta BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on audit_meta is refused'); END`,
	`CREATE TRIGGER audit_meta_no_DELETE BEFORE DELETE ON audit_meta BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on audit_meta is refused'); END`,
	`CREATE TRIGGER decision_bodies_no_UPDATE BEFORE UPDATE ON decision_bodies BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on decision_bodies is refused'); END`,
	`CREATE TRIGGER decision_bodies_no_DELETE BEFORE DELETE ON decision_bodies BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on decision_bodies is refused'); END`,
	`CREATE TRIGGER decisions_no_UPDATE BEFORE UPDATE ON decisions BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on decisions is refused'); END`,
	`CREATE TRIGGER decisions_no_DELETE BEFORE DELETE ON decisions BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on decisions is refused'); END`,
	`CREATE TRIGGER approvals_no_UPDATE BEFORE UPDATE ON approvals BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on approvals is refused'); END`,
	`CREATE TRIGGER approvals_no_DELETE BEFORE DELETE ON approvals BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on approvals is refused'); END`,
	`CREATE TRIGGER approval_uses_no_UPDATE BEFORE UPDATE ON approval_uses BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on approval_uses is refused'); END`,
	`CREATE TRIGGER approval_uses_no_DELETE BEFORE DELETE ON approval_uses BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on approval_uses is refused'); END`,
	`CREATE TRIGGER events_no_UPDATE BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on events is refused'); END`,
	`CREATE TRIGGER events_no_DELETE BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on events is refused'); END`,
}

// Log is a version 2 log being written.
type Log struct {
	db  *sql.DB
	now func() time.Time
}

// Create makes a version 2 log at path (a new file) as version 2 did: 4
// KiB pages, WAL, the schema and schema_version 2. now stamps approvals
// and uses, and decisions without a time.
func Create(path string, now func() time.Time) (*Log, error) {
	db, err := sql.Open("sqlite", sqlitefile.DSN(path, 10*time.Second)+"&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	stmts := append([]string{`PRAGMA page_size = 4096`, `PRAGMA journal_mode = WAL`, DDL}, Triggers...)
	stmts = append(stmts, `INSERT INTO audit_meta (key, value) VALUES ('schema_version', '2')`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("create version 2 log: %w", err)
		}
	}
	return &Log{db: db, now: now}, nil
}

// Close closes the file.
func (l *Log) Close() error { return l.db.Close() }

// head is the chain's last event and hash, and the last decision's seq,
// as version 2 read them: the last events row or the end of the last
// decision_bodies row, whichever is later.
func head(tx *sql.Tx) (seq int64, hash []byte, dseq int64, err error) {
	seq, hash = 0, auditchain.Genesis()
	err = tx.QueryRow(`SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, 0, err
	}
	var event int64
	var last []byte
	err = tx.QueryRow(`SELECT first_seq + n - 1, first_event + n - 1, head FROM decision_bodies ORDER BY first_event DESC LIMIT 1`).Scan(&dseq, &event, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return seq, hash, 0, nil
	case err != nil:
		return 0, nil, 0, err
	case event > seq:
		seq, hash = event, last
	}
	return seq, hash, dseq, nil
}

// Record writes ds as one commit of version 2's writer: a decisions row
// each, numbered on, and their bodies, each followed by a newline, as one
// decision_bodies row.
func (l *Log) Record(ds ...*audit.Decision) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	seq, prev, dseq, err := head(tx)
	if err != nil {
		return err
	}
	first, firstSeq := seq+1, dseq+1
	var bodies []byte
	for _, d := range ds {
		r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
		if err != nil {
			return err
		}
		seq, dseq = seq+1, dseq+1
		row := r.Row
		row.Seq = dseq
		prev = auditchain.Hash(prev, row.Payload())
		if _, err := tx.Exec(`INSERT INTO decisions (seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			dseq, seq, row.DecisionID, row.TimeNS, row.Outcome, row.PropositionID, row.Credential, row.IdemKey, row.ApprovalID, prev); err != nil {
			return err
		}
		bodies = append(append(bodies, row.Body...), '\n')
	}
	if _, err := tx.Exec(`INSERT INTO decision_bodies (first_event, first_seq, n, head, bodies) VALUES (?, ?, ?, ?, ?)`,
		first, firstSeq, len(ds), prev, bodies); err != nil {
		return err
	}
	return tx.Commit()
}

// Approve writes an operator's answer to a decision as version 2's
// Approve did, after audit.Approval.Admit.
func (l *Log) Approve(a *audit.Approval) error {
	return l.write(auditchain.TableApprovals, func(tx *sql.Tx) (int64, []byte, error) {
		var event, first int64
		var bodies []byte
		err := tx.QueryRow(`SELECT d.event, b.first_event, b.bodies FROM decisions d
			JOIN decision_bodies b ON b.first_event = (SELECT max(first_event) FROM decision_bodies WHERE first_event <= d.event)
			WHERE d.decision_id = ?`, auditchain.AsJSON(a.DecisionID)).Scan(&event, &first, &bodies)
		if err != nil {
			return 0, nil, fmt.Errorf("decision %s: %w", a.DecisionID, err)
		}
		d, err := auditchain.DecodeDecision(nth(bodies, event-first))
		if err != nil {
			return 0, nil, err
		}
		if err := a.Admit(d, "", l.now()); err != nil {
			return 0, nil, err
		}
		body, err := json.Marshal(a)
		if err != nil {
			return 0, nil, err
		}
		row := auditchain.ApprovalColumns(a, body)
		res, err := tx.Exec(`INSERT INTO approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?)`,
			row.ApprovalID, row.DecisionID, row.Verdict, row.CreatedNS, row.Body, row.BodySum)
		if err != nil {
			return 0, nil, err
		}
		row.Seq, err = res.LastInsertId()
		return row.Seq, row.Payload(), err
	})
}

// nth is the i-th newline-ended body of a decision_bodies row (nil past
// its end).
func nth(bodies []byte, i int64) []byte {
	for ; i >= 0; i-- {
		end := 0
		for end < len(bodies) && bodies[end] != '\n' {
			end++
		}
		if i == 0 {
			return bodies[:end]
		}
		if end == len(bodies) {
			return nil
		}
		bodies = bodies[end+1:]
	}
	return nil
}

// Consume writes the use of a single-use approval by decision usedBy as
// version 2's Consume did.
func (l *Log) Consume(approvalID, usedBy string) error {
	return l.write(auditchain.TableUses, func(tx *sql.Tx) (int64, []byte, error) {
		u := auditchain.Use{ApprovalID: auditchain.AsJSON(approvalID), UsedBy: usedBy, UsedNS: l.now().UnixNano()}
		res, err := tx.Exec(`INSERT INTO approval_uses (approval_id, used_by, used_ns) VALUES (?, ?, ?)`, u.ApprovalID, u.UsedBy, u.UsedNS)
		if err != nil {
			return 0, nil, err
		}
		u.Seq, err = res.LastInsertId()
		return u.Seq, u.Payload(), err
	})
}

// write runs an approval's or a use's write in its own transaction:
// insert writes the row and returns its seq and payload, and the events
// row recording it is chained on from the head.
func (l *Log) write(tbl string, insert func(*sql.Tx) (int64, []byte, error)) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	seq, prev, _, err := head(tx)
	if err != nil {
		return err
	}
	rowSeq, payload, err := insert(tx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO events (seq, tbl, row_seq, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`,
		seq+1, tbl, rowSeq, string(payload), prev, auditchain.Hash(prev, payload)); err != nil {
		return err
	}
	return tx.Commit()
}

// Head is the chain's last event, as version 2's Head read it.
func (l *Log) Head(ctx context.Context) (audit.Head, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return audit.Head{}, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	seq, hash, _, err := head(tx)
	if err != nil || seq == 0 {
		return audit.Head{}, err
	}
	return audit.Head{Seq: seq, Hash: hex.EncodeToString(hash)}, nil
}

// Version reads the schema_version of the log at path, and how many rows
// its decisions table has, through a connection of its own: what a test
// looks at to tell a version 2 log left alone.
func Version(path string) (string, int64, error) {
	db, err := sql.Open("sqlite", sqlitefile.DSN(path, 10*time.Second))
	if err != nil {
		return "", 0, err
	}
	defer db.Close()
	var v string
	var n int64
	if err := db.QueryRow(`SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return "", 0, err
	}
	err = db.QueryRow(`SELECT count(*) FROM decisions`).Scan(&n)
	return v, n, err
}
