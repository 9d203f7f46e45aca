// Package v1fixture writes decision logs in SQLite schema version 1, as
// the ewp releases before schema 2 wrote them (a wide decisions row with
// its body and body_sha256, and an events row for every row), so that
// the tests of sqlite.Upgrade and of `ewp-audit upgrade` start from a real
// old log. It is for tests only: nothing in a release imports it.
//
// The schema is version 1's text, verbatim, and the rows and chain events
// are written the way version 1's writer wrote them, one transaction per
// write, with the payloads and link hash of package auditchain.
package v1fixture

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

// DDL is version 1's schema, as version 1's schema.go created it.
const DDL = `
CREATE TABLE audit_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per recorded gate call. body is the decision's JSON; the other
-- columns are derived from it for lookups and filters. idem_key is NULL
-- when the caller gave none; the unique index holds only keyed decisions.
CREATE TABLE decisions (
	seq            INTEGER PRIMARY KEY,
	decision_id    TEXT NOT NULL UNIQUE,
	time_ns        INTEGER NOT NULL,
	tool           TEXT NOT NULL,
	outcome        TEXT NOT NULL,
	proposition_id TEXT NOT NULL,
	credential     TEXT NOT NULL,
	idem_key       TEXT,
	approval_id    TEXT NOT NULL,
	body           BLOB NOT NULL,
	body_sha256    BLOB NOT NULL
);
-- Few indexes, each written at its end or rarely: every index costs every
-- Record on the server's hot path. time_ns and decision_id grow with the
-- clock; the pending and approval indexes hold only the decisions that
-- asked for or presented an approval. Filters by proposition or outcome
-- scan (within the time window, when one is given): they are an
-- operator's queries, not the server's.
CREATE UNIQUE INDEX decisions_idem ON decisions (credential, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX decisions_time ON decisions (time_ns);
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

-- The hash chain over every row of the three tables above:
-- hash = sha256(prev_hash || payload), payload being the canonical JSON of
-- the row it records (see chain.go). Rows are written in seq order and
-- their events in the same order, so per table row_seq strictly increases
-- along the chain; Verify relies on that instead of an index on
-- (tbl, row_seq) that every Record would pay for.
CREATE TABLE events (
	seq       INTEGER PRIMARY KEY,
	tbl       TEXT NOT NULL,
	row_seq   INTEGER NOT NULL,
	payload   TEXT NOT NULL,
	prev_hash BLOB NOT NULL,
	hash      BLOB NOT NULL
);
`

// Triggers are version 1's append-only triggers, as sqlite_master kept
// them.
var Triggers = []string{
	`CREATE TRIGGER audit_meta_no_UPDATE BEFORE UPDATE ON audit_meta BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on audit_meta is refused'); END`,
	`CREATE TRIGGER audit_meta_no_DELETE BEFORE DELETE ON audit_meta BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on audit_meta is refused'); END`,
	`CREATE TRIGGER decisions_no_UPDATE BEFORE UPDATE ON decisions BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on decisions is refused'); END`,
	`CREATE TRIGGER decisions_no_DELETE BEFORE DELETE ON decisions BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on decisions is refused'); END`,
	`CREATE TRIGGER approvals_no_UPDATE BEFORE UPDATE ON approvals BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on approvals is refused'); END`,
	`CREATE TRIGGER approvals_no_DELETE BEFORE DELETE ON approvals BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on approvals is refused'); END`,
	`CREATE TRIGGER approval_uses_no_UPDATE BEFORE UPDATE ON approval_uses BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on approval_uses is refused'); END`,
	`CREATE TRIGGER approval_uses_no_DELETE BEFORE DELETE ON approval_uses BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on approval_uses is refused'); END`,
	`CREATE TRIGGER events_no_UPDATE BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; UPDATE on events is refused'); END`,
	`CREATE TRIGGER events_no_DELETE BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; DELETE on events is refused'); END`,
}

// Log is a version 1 log being written.
type Log struct {
	db  *sql.DB
	now func() time.Time
}

// Create makes a version 1 log at path (a new file) as version 1 did: 16
// KiB pages, WAL, the schema and schema_version 1, written with
// synchronous=NORMAL. now stamps approvals and uses, and decisions without
// a time.
func Create(path string, now func() time.Time) (*Log, error) {
	db, err := sql.Open("sqlite", sqlitefile.DSN(path, 10*time.Second)+"&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	stmts := append([]string{`PRAGMA page_size = 16384`, `PRAGMA journal_mode = WAL`, DDL}, Triggers...)
	stmts = append(stmts, `INSERT INTO audit_meta (key, value) VALUES ('schema_version', '1')`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("create version 1 log: %w", err)
		}
	}
	return &Log{db: db, now: now}, nil
}

// Close closes the file.
func (l *Log) Close() error { return l.db.Close() }

// Record writes d as version 1's Record did: its row, then its event.
func (l *Log) Record(d *audit.Decision) error {
	r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
	if err != nil {
		return err
	}
	row := r.Row
	return l.write(auditchain.TableDecisions, func(tx *sql.Tx) (int64, []byte, error) {
		res, err := tx.Exec(`INSERT INTO decisions (decision_id, time_ns, tool, outcome, proposition_id, credential, idem_key, approval_id, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			row.DecisionID, row.TimeNS, row.Tool, row.Outcome, row.PropositionID, row.Credential, row.IdemKey, row.ApprovalID, row.Body, row.BodySum)
		if err != nil {
			return 0, nil, err
		}
		seq, err := res.LastInsertId()
		row.Seq = seq
		return seq, row.Payload(), err
	})
}

// Approve writes an operator's answer to a decision as version 1's
// Approve did, after audit.Approval.Admit.
func (l *Log) Approve(a *audit.Approval) error {
	return l.write(auditchain.TableApprovals, func(tx *sql.Tx) (int64, []byte, error) {
		var body []byte
		if err := tx.QueryRow(`SELECT body FROM decisions WHERE decision_id = ?`, auditchain.AsJSON(a.DecisionID)).Scan(&body); err != nil {
			return 0, nil, fmt.Errorf("decision %s: %w", a.DecisionID, err)
		}
		d, err := auditchain.DecodeDecision(body)
		if err != nil {
			return 0, nil, err
		}
		if err := a.Admit(d, "", l.now()); err != nil {
			return 0, nil, err
		}
		if body, err = json.Marshal(a); err != nil {
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

// Consume writes the use of a single-use approval by decision usedBy as
// version 1's Consume did.
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

// write runs one write in its own transaction: insert writes the row and
// returns its seq and payload, and the event recording it is chained on
// from the last one.
func (l *Log) write(tbl string, insert func(*sql.Tx) (int64, []byte, error)) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	seq, prev := int64(0), auditchain.Genesis()
	err = tx.QueryRow(`SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
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

// Head is the chain's last event, as version 1's Head read it.
func (l *Log) Head(ctx context.Context) (audit.Head, error) {
	var h audit.Head
	var sum []byte
	err := l.db.QueryRowContext(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return audit.Head{}, nil
	}
	h.Hash = hex.EncodeToString(sum)
	return h, err
}

// Version reads the schema_version of the log at path ("" when there is
// none), and how many rows its decisions table has, through a connection
// of its own: what a test looks at to tell a version 1 log left alone.
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
