package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/internal/sqlitefile"
)

// UpgradeReport says what Upgrade found and did.
type UpgradeReport struct {
	Path string `json:"path"`
	// From and To are the schema versions before and after; both
	// SchemaVersion when the log was current and nothing was done.
	From     int  `json:"from_version"`
	To       int  `json:"to_version"`
	Upgraded bool `json:"upgraded"`
	// The chain's events and the rows they record, which an upgrade
	// keeps, every one.
	Events    int64 `json:"events"`
	Decisions int64 `json:"decisions"`
	Approvals int64 `json:"approvals"`
	Uses      int64 `json:"approval_uses"`
	// BodyRows is how many decision_bodies rows an upgrade wrote the
	// decisions' bodies into.
	BodyRows int64 `json:"decision_bodies_rows,omitempty"`
	// HeadBefore is the head of the chain as found, HeadAfter as left:
	// always equal (Upgrade fails otherwise), since the payloads and
	// hashes are the same in both versions.
	HeadBefore audit.Head `json:"head_before"`
	HeadAfter  audit.Head `json:"head_after"`
}

// bodiesPerRow caps the bodies an upgrade puts in one decision_bodies
// row: a reader of one decision reads its whole row.
const bodiesPerRow = 256

// v1Prefix and v2Prefix name the old version's tables while this
// version's are built beside them, inside the upgrade's transaction.
const (
	v1Prefix = "upgrade_v1_"
	v2Prefix = "upgrade_v2_"
)

// Upgrade brings the log at path to this build's schema in place, in one
// IMMEDIATE transaction: all or nothing, so a crash or a failure leaves
// the log as it was. A version 1 or 2 log is first verified completely
// (every link, every row against its event and every body against its
// sha256) and refused, naming the first break, if anything was edited:
// converting it would carry the edit into a chain that no longer shows
// it. Then its decisions become this version's decision_bodies rows and
// a decisions row for each special one (see special), its approvals,
// uses and their events are kept, and the result is verified
// again, inside the transaction, to end at exactly the same head before
// it is committed. A log already at this version is left alone (Upgraded
// false); any other version is refused with ErrSchemaVersion. A missing
// file is an error wrapping ErrLogNotFound and is not created. Only
// BusyTimeout of opt is used. Writers of the old version must be stopped
// first: their statements no longer fit the file. The transaction's WAL
// holds the rebuilt tables until the next checkpoint, so the upgrade
// needs free space about the size of the log; the old tables' pages are
// left free inside the file for new writes.
func Upgrade(ctx context.Context, path string, opt Options) (UpgradeReport, error) {
	rep := UpgradeReport{Path: path}
	if opt.ReadOnly {
		return rep, fmt.Errorf("upgrade decision log %s: an upgrade rewrites the file; it cannot be read-only", path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("%w: %s does not exist; nothing to upgrade (check --db/--audit)", ErrLogNotFound, path)
	} else if err != nil {
		return rep, fmt.Errorf("upgrade decision log %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return rep, err
	}
	db, err := sql.Open("sqlite", sqlitefile.DSN(abs, opt.busyTimeout())+"&_txlock=immediate")
	if err != nil {
		return rep, fmt.Errorf("upgrade decision log %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := upgrade(ctx, db, path, &rep, opt.upgradeFault); err != nil {
		return rep, err
	}
	return rep, nil
}

// upgrade runs Upgrade's transaction. It begins IMMEDIATE, so no other
// writer moves the chain between the check and the rebuild, and reads
// the version inside it: of two processes upgrading at once, the second
// finds this version.
func upgrade(ctx context.Context, db *sql.DB, path string, rep *UpgradeReport, fault func(string) error) error {
	fail := func(err error) error {
		return fmt.Errorf("upgrade decision log %s: %w (nothing was changed)", path, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return fmt.Errorf("%s is not a decision log (no schema_version: %v); point --audit at the log ewp-mcp writes (by default LEDGER.audit beside the ledger)", path, err)
	}
	switch v {
	case strconv.Itoa(SchemaVersion):
		if err := currentReport(ctx, tx, rep); err != nil {
			return fail(err)
		}
		return nil
	}
	old, ok := oldVersions[v]
	if !ok {
		return fmt.Errorf("%w: %s has schema_version %s; this build reads version %d and upgrades versions 1 and 2 only; use the ewp release that wrote it", ErrSchemaVersion, path, v, SchemaVersion)
	}
	if err := fromOld(ctx, tx, rep, path, fault, old); err != nil {
		var brk *Break
		if errors.As(err, &brk) {
			return err
		}
		return fail(err)
	}
	if err := step(fault, "commit"); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	rep.Upgraded = true
	return nil
}

// step runs the test hook for stage, if any.
func step(fault func(string) error, stage string) error {
	if fault == nil {
		return nil
	}
	return fault(stage)
}

// currentReport fills the report of a log already at this version.
func currentReport(ctx context.Context, tx *sql.Tx, rep *UpgradeReport) error {
	rep.From, rep.To = SchemaVersion, SchemaVersion
	h, err := readHead(ctx, tx)
	if err != nil {
		return err
	}
	rep.HeadBefore, rep.HeadAfter, rep.Events = h, h, h.Seq
	return tx.QueryRowContext(ctx, `SELECT (SELECT coalesce(sum(n), 0) FROM decision_bodies), (SELECT count(*) FROM approvals), (SELECT count(*) FROM approval_uses)`).
		Scan(&rep.Decisions, &rep.Approvals, &rep.Uses)
}

// oldVersion is what Upgrade knows of a schema version it converts.
type oldVersion struct {
	n int
	// tables are its append-only tables (their triggers are spelled as
	// this version's), indexes those of its indexes whose names this
	// version reuses.
	tables, indexes []string
	// prefix names its tables while this version's are built beside them.
	prefix string
	// verify checks the whole old log in tx: a *Break, or an I/O error.
	verify func(context.Context, *sql.Tx) (VerifyReport, error)
	// copyDecisions writes its decisions, set aside under prefix, as this
	// version keeps them, returning the decision_bodies rows written.
	copyDecisions func(context.Context, *sql.Tx) (int64, error)
}

// oldVersions are the versions Upgrade converts, by schema_version.
var oldVersions = map[string]oldVersion{
	"1": {n: 1, tables: v1Tables, indexes: v1Indexes, prefix: v1Prefix, verify: verifyV1, copyDecisions: copyDecisionsV1},
	"2": {n: 2, tables: v2Tables, indexes: v2Indexes, prefix: v2Prefix, verify: verifyV2, copyDecisions: copyDecisionsV2},
}

// fromOld verifies the old log in tx and rebuilds it as this version,
// then verifies the result against the head it started from.
func fromOld(ctx context.Context, tx *sql.Tx, rep *UpgradeReport, path string, fault func(string) error, old oldVersion) error {
	was, err := old.verify(ctx, tx)
	var brk *Break
	if errors.As(err, &brk) {
		return fmt.Errorf("refusing to upgrade %s, which is left at version %d: %w; converting it would carry the change into a chain that no longer shows it: restore the file from a copy, or investigate with the ewp release that wrote it (ewp-audit verify)", path, old.n, brk)
	}
	if err != nil {
		return fmt.Errorf("verify version %d: %w", old.n, err)
	}
	rep.From, rep.To = old.n, SchemaVersion
	rep.Events, rep.Decisions, rep.Approvals, rep.Uses = was.Events, was.Decisions, was.Approvals, was.Uses
	rep.HeadBefore = was.Head
	if err := setAside(ctx, tx, old); err != nil {
		return fmt.Errorf("set the version %d tables aside: %w", old.n, err)
	}
	if err := layout(ctx, tx); err != nil {
		return err
	}
	if err := copyKept(ctx, tx, old.prefix); err != nil {
		return fmt.Errorf("copy approvals and uses: %w", err)
	}
	if rep.BodyRows, err = old.copyDecisions(ctx, tx); err != nil {
		return fmt.Errorf("copy decisions: %w", err)
	}
	if err := step(fault, "copied"); err != nil {
		return err
	}
	for _, t := range old.tables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE `+old.prefix+t); err != nil {
			return fmt.Errorf("drop version %d table %s: %w", old.n, t, err)
		}
	}
	if err := step(fault, "dropped"); err != nil {
		return err
	}
	return checkRebuilt(ctx, tx, rep, was, old.n)
}

// setAside drops the old version's triggers and the indexes whose names
// this version reuses, and renames its tables out of the way (their own
// automatic indexes follow them), so that this version's schema can be
// created exactly as a new log's.
func setAside(ctx context.Context, tx *sql.Tx, old oldVersion) error {
	var stmts []string
	for name := range triggersOn(old.tables) {
		stmts = append(stmts, `DROP TRIGGER `+name)
	}
	for _, ix := range old.indexes {
		stmts = append(stmts, `DROP INDEX IF EXISTS `+ix)
	}
	for _, t := range old.tables {
		stmts = append(stmts, `ALTER TABLE `+t+` RENAME TO `+old.prefix+t)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// copyKept copies what this version keeps as it was from the old tables
// set aside under prefix: the approvals, the uses, their events (numbers,
// payloads and hashes unchanged; version 1 also had events for the
// decisions, which this version does not keep) and any other audit_meta
// key.
func copyKept(ctx context.Context, tx *sql.Tx, prefix string) error {
	for _, q := range []string{
		`INSERT INTO audit_meta (key, value) SELECT key, value FROM ` + prefix + `audit_meta WHERE key <> 'schema_version'`,
		`INSERT INTO approvals (seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
			SELECT seq, approval_id, decision_id, verdict, created_ns, body, body_sha256 FROM ` + prefix + `approvals ORDER BY seq`,
		`INSERT INTO approval_uses (seq, approval_id, used_by, used_ns)
			SELECT seq, approval_id, used_by, used_ns FROM ` + prefix + `approval_uses ORDER BY seq`,
		`INSERT INTO events (seq, tbl, row_seq, payload, prev_hash, hash)
			SELECT seq, tbl, row_seq, payload, prev_hash, hash FROM ` + prefix + `events WHERE tbl <> 'decisions' ORDER BY seq`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// v1DecisionsSQL lists the version 1 decisions in chain order with the
// event that recorded each (verifyV1 established one event per row, in
// row order).
const v1DecisionsSQL = `
SELECT e.seq, e.hash, d.seq, d.decision_id, d.time_ns, d.outcome, d.proposition_id, d.credential, d.idem_key, d.approval_id, d.body
FROM ` + v1Prefix + `events e JOIN ` + v1Prefix + `decisions d ON d.seq = e.row_seq
WHERE e.tbl = 'decisions'
ORDER BY e.seq`

// copyDecisionsV1 writes the version 1 decisions as this version keeps
// them (copyDecisions); each row holds its body. It returns how many
// decision_bodies rows it wrote.
func copyDecisionsV1(ctx context.Context, tx *sql.Tx) (int64, error) {
	return copyDecisions(ctx, tx, v1DecisionsSQL, func(rows *sql.Rows, event *int64, hash *[]byte, r *decisionRow) error {
		return rows.Scan(event, hash, &r.Seq, &r.DecisionID, &r.TimeNS, &r.Outcome, &r.PropositionID, &r.Credential, &r.IdemKey, &r.ApprovalID, &r.Body)
	})
}

// copyDecisions writes an old log's decisions, which query lists in
// chain order and scan reads (the decision's event, its hash, its row
// with its body), as this version keeps them (decisionCopier). It returns
// how many decision_bodies rows it wrote.
func copyDecisions(ctx context.Context, tx *sql.Tx, query string, scan func(rows *sql.Rows, event *int64, hash *[]byte, r *decisionRow) error) (int64, error) {
	c, err := newDecisionCopier(ctx, tx)
	if err != nil {
		return 0, err
	}
	defer c.close()
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var event int64
		var hash []byte
		var r decisionRow
		if err := scan(rows, &event, &hash, &r); err != nil {
			return 0, err
		}
		if err := c.add(event, hash, &r); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return c.g.rows, c.g.flush()
}

// decisionCopier writes an old log's decisions, handed in chain order, as
// this version keeps them: a decisions row (carrying the event's number
// and hash) only for a special one, and every body in decision_bodies
// rows, a row per run of consecutive events, at most bodiesPerRow each,
// with their in-order ids' range.
type decisionCopier struct {
	ctx   context.Context
	ins   *sql.Stmt
	g     bodyGroup
	maxID string // the greatest in-order id so far
}

func newDecisionCopier(ctx context.Context, tx *sql.Tx) (*decisionCopier, error) {
	c := &decisionCopier{ctx: ctx, g: bodyGroup{ctx: ctx}}
	var err error
	if c.ins, err = tx.PrepareContext(ctx, `INSERT INTO decisions (seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, err
	}
	if c.g.ins, err = tx.PrepareContext(ctx, `INSERT INTO decision_bodies (first_event, first_seq, n, head, first_id, last_id, bodies) VALUES (?, ?, ?, ?, ?, ?, ?)`); err != nil {
		c.ins.Close()
		return nil, err
	}
	return c, nil
}

func (c *decisionCopier) close() {
	c.ins.Close()
	c.g.ins.Close()
}

// add writes the decision at event (its chain hash; r its columns, seq
// and body, which the old log's verification found in agreement).
func (c *decisionCopier) add(event int64, hash []byte, r *decisionRow) error {
	if bytes.IndexByte(r.Body, '\n') >= 0 {
		return fmt.Errorf("decision %s (event %d) has a newline in its JSON body, which this version uses to separate bodies; no ewp release writes one", r.DecisionID, event)
	}
	inOrder := r.DecisionID > c.maxID
	if inOrder {
		c.maxID = r.DecisionID
	}
	if special(r, inOrder) {
		if _, err := c.ins.ExecContext(c.ctx, r.Seq, event, r.DecisionID, r.TimeNS, r.Outcome, r.PropositionID, r.Credential, r.IdemKey, r.ApprovalID, hash); err != nil {
			return fmt.Errorf("decision %s: %w", r.DecisionID, err)
		}
	}
	id := ""
	if inOrder {
		id = r.DecisionID
	}
	return c.g.add(event, r.Seq, hash, r.Body, id)
}

// bodyGroup gathers the bodies of consecutive decisions into one
// decision_bodies row.
type bodyGroup struct {
	ctx         context.Context
	ins         *sql.Stmt
	first, last int64 // the events of the row's first and last body
	firstSeq    int64 // and the first one's decision row
	lastSeq     int64
	head        []byte // the last one's hash
	ids         idRange
	n           int
	buf         []byte
	rows        int64 // rows written
}

// add appends the body of the decision at event (seq, hash; its id when
// it is in order, else ""), first writing the row gathered so far if
// event and seq do not follow it or it is full.
func (g *bodyGroup) add(event, seq int64, hash, body []byte, inOrderID string) error {
	if g.n > 0 && (event != g.last+1 || seq != g.lastSeq+1 || g.n == bodiesPerRow || len(g.buf)+len(body)+1 > maxBodiesRow) {
		if err := g.flush(); err != nil {
			return err
		}
	}
	if g.n == 0 {
		g.first, g.firstSeq = event, seq
	}
	g.buf = appendBody(g.buf, body)
	if inOrderID != "" {
		g.ids.add(inOrderID)
	}
	g.n, g.last, g.lastSeq, g.head = g.n+1, event, seq, hash
	return nil
}

func (g *bodyGroup) flush() error {
	if g.n == 0 {
		return nil
	}
	if _, err := g.ins.ExecContext(g.ctx, g.first, g.firstSeq, g.n, g.head, g.ids.first, g.ids.last, g.buf); err != nil {
		return fmt.Errorf("decision_bodies row at event %d: %w", g.first, err)
	}
	g.rows++
	g.n, g.buf, g.ids = 0, g.buf[:0], idRange{}
	return nil
}

// checkRebuilt verifies the rebuilt log in tx as Verify will (the schema
// and triggers included) and requires it to hold what the old version
// (from) held, old: the same counts and the same head, which the chain
// must pass through.
func checkRebuilt(ctx context.Context, tx *sql.Tx, rep *UpgradeReport, old VerifyReport, from int) error {
	var got VerifyReport
	var want *audit.Head
	if old.Head.Seq > 0 {
		want = &old.Head
	}
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&got, want), prev: genesis()}
	err := auditchain.RunChecks(&got, func(err error) error { return err }, v.walk, v.headCheck, v.orphans, v.schema)
	var brk *Break
	if errors.As(err, &brk) {
		return fmt.Errorf("the rebuilt log does not verify (%v); this is a bug, please report it", brk)
	}
	if err != nil {
		return fmt.Errorf("verify the rebuilt log: %w", err)
	}
	head, err := readHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("read the rebuilt log's head: %w", err)
	}
	rep.HeadAfter = head
	if head != old.Head || got.Head != old.Head || got.Events != old.Events || got.Decisions != old.Decisions || got.Approvals != old.Approvals || got.Uses != old.Uses {
		return fmt.Errorf("the rebuilt log ends at head %s with %d events (%d decisions, %d approvals, %d uses), version %d at %s with %d (%d, %d, %d); this is a bug, please report it",
			head, got.Events, got.Decisions, got.Approvals, got.Uses, from, old.Head, old.Events, old.Decisions, old.Approvals, old.Uses)
	}
	return nil
}

// upgradeOld upgrades the log at path when it is at version 1 or 2 (a
// writer's Open: ewp-mcp then starts on an old log as on a current one);
// q reads the version first, so a current log costs one query.
func upgradeOld(ctx context.Context, q querier, path string, opt Options) error {
	var v string
	if err := q.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&v); err != nil || oldVersions[v].n == 0 {
		return nil // checkSchema names what is wrong
	}
	_, err := Upgrade(ctx, path, opt)
	return err
}
