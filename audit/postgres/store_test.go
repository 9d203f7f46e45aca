package postgres_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/pgtest"
	ledgerpg "github.com/ewp-go/ewp/ledger/postgres"
)

func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

func mustExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// history writes the same short history into any log: two decisions, a
// once approval of the first and its use, a keyed decision, a rejection
// of the second. Ids and times are fixed, so two stores given it must
// hold the same chain.
func history(t testing.TB, l audit.Log) {
	t.Helper()
	d1, d2 := audittest.PendingDecision("P-db", 1), audittest.PendingDecision("P-db", 2)
	d1.ID, d2.ID = "01a2321e-666d-75f3-8893-2b1f05c5e601", "01a2321e-666d-75f3-8893-2b1f05c5e602"
	d3 := audittest.PendingDecision("P-\x00-nul", 3)
	d3.ID, d3.IdempotencyKey = "01a2321e-666d-75f3-8893-2b1f05c5e603", "retry-1"
	for _, d := range []*audit.Decision{d1, d2} {
		if err := l.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	a := &audit.Approval{ID: "01a2321e-8280-70a5-b142-d4ec45396001", DecisionID: d1.ID, Verdict: audit.Approved, Approver: "alice", Once: true}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatal(err)
	}
	d4 := audittest.UsingDecision(a.ID, 4)
	d4.ID = "01a2321e-666d-75f3-8893-2b1f05c5e604"
	if err := l.RecordUse(ctx, d4); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, d3); err != nil {
		t.Fatal(err)
	}
	r := &audit.Approval{ID: "01a2321e-8280-70a5-b142-d4ec45396002", DecisionID: d2.ID, Verdict: audit.Rejected, Approver: "bob", Note: "use the replica"}
	if err := l.Approve(ctx, r); err != nil {
		t.Fatal(err)
	}
}

func fixed() time.Time { return audittest.T0 }

// TestSameChainAsSQLite: the same history written to an SQLite log and a
// PostgreSQL log gives the same chain head (same payloads, same hashes),
// so a log copied from one to the other keeps its head, and a head kept
// from one verifies against the other.
func TestSameChainAsSQLite(t *testing.T) {
	sl, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db.audit"), sqlite.Options{Now: fixed})
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	pl := openLog(t, newDB(t), postgres.Options{Now: fixed})
	history(t, sl)
	history(t, pl)
	sh, err := sl.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ph, err := pl.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sh != ph || sh.Seq != 7 {
		t.Fatalf("heads differ: sqlite %s, postgres %s", sh, ph)
	}
	if rep, err := pl.VerifyHead(ctx, sh); err != nil || rep.Uses != 1 || rep.Approvals != 2 {
		t.Fatalf("postgres log against the SQLite head: %+v %v", rep, err)
	}
	got, err := pl.ByIdempotencyKey(ctx, "agent-1", "retry-1")
	if err != nil || got.PropositionID != "P-\x00-nul" {
		t.Fatalf("a NUL in an id: %+v %v", got, err)
	}
}

// TestInitIsIdempotentAndConcurrent: Init run by several processes at
// once, and again later, leaves one intact schema.
func TestInitIsIdempotentAndConcurrent(t *testing.T) {
	url := pgtest.DB(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = postgres.Init(ctx, url, "") })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l := openLog(t, url, postgres.Options{})
	history(t, l)
	if err := postgres.Init(ctx, url, ""); err != nil {
		t.Fatalf("Init over a log in use: %v", err)
	}
	audittest.MustVerify(t, l)
}

func TestOpenWithoutInit(t *testing.T) {
	_, err := postgres.Open(ctx, pgtest.DB(t), postgres.Options{})
	if !errors.Is(err, postgres.ErrNoLog) || !strings.Contains(err.Error(), "init") {
		t.Fatalf("a database without the log: %v", err)
	}
}

// TestRoles: a login role in ewp_server records decisions and consumes
// approvals through Open but cannot store an approval (an agent-facing
// replica must not mint one), nor change rows or create tables; a login in
// ewp_operator stores approvals and nothing else; a login role of any
// other group (the ledger's writer) cannot touch the log; and the
// triggers refuse UPDATE, DELETE and TRUNCATE even to the owner.
func TestRoles(t *testing.T) {
	url := newDB(t)
	admin := connect(t, url)
	for _, q := range []string{
		`DO $$ BEGIN CREATE ROLE ewp_writer NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_test_mcp LOGIN IN ROLE ewp_server; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_test_op LOGIN IN ROLE ewp_operator; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_test_ingest LOGIN IN ROLE ewp_writer; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
	} {
		mustExec(t, admin, q)
	}
	l := openLog(t, pgtest.WithUser(url, "audit_test_mcp"), postgres.Options{})
	op := openLog(t, pgtest.WithUser(url, "audit_test_op"), postgres.Options{})
	d := audittest.PendingDecision("P-db", 1)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	forged := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}
	if err := audittest.NewOperator("alice").Approve(ctx, l, forged); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the server role stored an approval: %v", err)
	}
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}
	if err := audittest.NewOperator("alice").Approve(ctx, op, a); err != nil {
		t.Fatalf("the operator role approves: %v", err)
	}
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 2)); err != nil {
		t.Fatalf("the server role records a decision and its use: %v", err)
	}
	audittest.MustVerify(t, l)
	operator := connect(t, pgtest.WithUser(url, "audit_test_op"))
	if _, err := operator.Exec(ctx, `INSERT INTO ewp_audit.approval_uses (approval_id, used_by, used_ns) VALUES ('x', 'y', 1)`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the operator role wrote a use: %v", err)
	}

	server := connect(t, pgtest.WithUser(url, "audit_test_mcp"))
	for _, q := range []string{
		`UPDATE ewp_audit.decisions SET outcome = 'MAY_ACT'`, `DELETE FROM ewp_audit.approval_uses`,
		`TRUNCATE ewp_audit.events`, `CREATE TABLE ewp_audit.sneaky (x int)`, `DROP TRIGGER events_no_change ON ewp_audit.events`,
	} {
		if _, err := server.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "42501") && !strings.Contains(err.Error(), "must be owner") {
			t.Errorf("the server role ran %s: %v", q, err)
		}
	}
	ingest := connect(t, pgtest.WithUser(url, "audit_test_ingest"))
	if _, err := ingest.Exec(ctx, `SELECT count(*) FROM ewp_audit.decisions`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the ledger's writer role read the log: %v", err)
	}
	for _, q := range []string{
		`UPDATE ewp_audit.decisions SET outcome = 'MAY_ACT'`, `DELETE FROM ewp_audit.decisions`,
		`UPDATE ewp_audit.approvals SET verdict = 'approved'`, `DELETE FROM ewp_audit.approval_uses`,
		`UPDATE ewp_audit.events SET payload = ''`, `DELETE FROM ewp_audit.audit_meta`,
		`TRUNCATE ewp_audit.events`, `TRUNCATE ewp_audit.approval_uses`,
	} {
		if _, err := admin.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "EWP_REFUSE_IMMUTABLE_RECORD") {
			t.Errorf("the owner ran %s: %v", q, err)
		}
	}
}

// TestManyWritersOneChainAcrossPools: three pools (replicas) each with
// 24 concurrent callers mixing Records, Approves and Consumes: the chain
// never forks, nothing is lost, and each once approval is used once.
func TestManyWritersOneChainAcrossPools(t *testing.T) {
	url := newDB(t)
	pools := []*postgres.Log{openLog(t, url, postgres.Options{}), openLog(t, url, postgres.Options{}), openLog(t, url, postgres.Options{})}
	var pending []*audit.Decision
	for i := range 24 {
		d := audittest.PendingDecision("P", 1000+i)
		if err := pools[0].Record(ctx, d); err != nil {
			t.Fatal(err)
		}
		pending = append(pending, d)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded, uses := 0, 0
	for p, l := range pools {
		for g := range 24 {
			wg.Go(func() {
				for i := range 10 {
					if err := l.Record(ctx, audittest.PendingDecision("P", p*10000+g*100+i)); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					recorded++
					mu.Unlock()
				}
				// Every pool's callers try to approve and consume the
				// same decisions: one answer each, one use each.
				a := &audit.Approval{DecisionID: pending[g].ID, Verdict: audit.Approved, Approver: "ops", Once: true}
				if err := l.Approve(ctx, a); err != nil && !errors.Is(err, audit.ErrAnswered) {
					t.Error(err)
					return
				}
				got, err := l.ApprovalsFor(ctx, pending[g].ID)
				if err != nil || len(got) != 1 {
					t.Errorf("approvals of %s: %v %v", pending[g].ID, got, err)
					return
				}
				err = l.RecordUse(ctx, audittest.UsingDecision(got[0].ID, p*10000+g*100+99))
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					uses++
				} else if !errors.Is(err, audit.ErrApprovalUsed) {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	rep := audittest.MustVerify(t, pools[2])
	if rep.Decisions != int64(24+recorded+uses) || recorded != 3*24*10 || rep.Approvals != 24 || rep.Uses != 24 || uses != 24 {
		t.Fatalf("report %+v; %d recorded, %d uses", rep, recorded, uses)
	}
}

// TestBesideTheLedger: the log's Init beside the ledger's, in one
// database, with the ledger's roles: a login in the server role reads the
// ledger and writes the log, and cannot write the ledger; a login in the
// reader role reads the ledger and cannot touch the log.
func TestBesideTheLedger(t *testing.T) {
	url := pgtest.DB(t)
	if err := ledgerpg.Init(ctx, url, ledgerpg.Roles{}); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Init(ctx, url, ledgerpg.DefaultRoles.Server); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	for _, q := range []string{
		`DO $$ BEGIN CREATE ROLE audit_test_mcp LOGIN IN ROLE ewp_server; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_test_reader LOGIN IN ROLE ewp_reader; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
	} {
		mustExec(t, admin, q)
	}
	serverURL := pgtest.WithUser(url, "audit_test_mcp")
	led, err := ledgerpg.Open(ctx, serverURL, ledgerpg.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	if _, err := led.Head(ctx); err != nil {
		t.Fatalf("the server role reads the ledger: %v", err)
	}
	l := openLog(t, serverURL, postgres.Options{})
	if err := l.Record(ctx, audittest.PendingDecision("P-db", 1)); err != nil {
		t.Fatal(err)
	}
	audittest.MustVerify(t, l)
	server := connect(t, serverURL)
	if _, err := server.Exec(ctx, `INSERT INTO ledger_meta (key, value) VALUES ('x', 'y')`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the server role wrote the ledger: %v", err)
	}
	reader := connect(t, pgtest.WithUser(url, "audit_test_reader"))
	if _, err := reader.Exec(ctx, `SELECT count(*) FROM ledger_meta`); err != nil {
		t.Errorf("the reader role reads the ledger: %v", err)
	}
	if _, err := reader.Exec(ctx, `SELECT count(*) FROM ewp_audit.decisions`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the reader role read the log: %v", err)
	}
}
