package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/sources"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/internal/pgtest"
	ledgersqlite "github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

const testToken = "op-5f1c9a7e3b2d8046-test-token"

// clockAt is the fixed server clock of the tests: after the quickstart's
// evidence (November 2026).
var clockAt = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// env is a console over a real ledger (the quickstart examples, the demo
// concept graph and its policies) and a decision log of the same store,
// served by an httptest server.
type env struct {
	t       testing.TB
	srv     *httptest.Server
	con     *console.Console
	l       store.Ledger
	log     auditstore.Log
	pending *audit.Decision
}

type envOpt func(*console.Config)

// backend is one of the two stores: open gives a fresh, empty ledger
// (created_at from now) and decision log (clock clockAt) of that store.
type backend struct {
	name string
	open func(t testing.TB, now func() time.Time) (store.Ledger, auditstore.Log)
}

var (
	sqliteStore   = backend{"sqlite", openSQLite}
	postgresStore = backend{"postgres", openPostgres}
)

// eachStore runs fn on the SQLite stores and on the PostgreSQL ones (a
// throwaway cluster, see internal/pgtest; skipped loudly without one,
// failed under CI).
func eachStore(t *testing.T, fn func(t *testing.T, st backend)) {
	for _, st := range []backend{sqliteStore, postgresStore} {
		t.Run(st.name, func(t *testing.T) { fn(t, st) })
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

func openSQLite(t testing.TB, now func() time.Time) (store.Ledger, auditstore.Log) {
	dir := t.TempDir()
	l, err := ledgersqlite.Create(filepath.Join(dir, "ledger.db"), ledgersqlite.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	alog, err := sqlite.Create(filepath.Join(dir, "ledger.db.audit"), sqlite.Options{Now: func() time.Time { return clockAt }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	return l, alog
}

// openPostgres takes a copy of a template database holding the ledger's
// and the decision log's empty schemas (made once per test binary, as
// ewp-ingest's store.Open with Create makes them), so a test pays for a
// database copy, not for the schemas' creation.
func openPostgres(t testing.TB, now func() time.Time) (store.Ledger, auditstore.Log) {
	ctx := context.Background()
	tpl := pgtest.Template(t, fmt.Sprintf("ewp_console_tpl_%d", os.Getpid()), func(url string) error {
		l, err := store.Open(ctx, url, store.Options{Create: true})
		if err != nil {
			return err
		}
		return l.Close()
	})
	url := pgtest.DBFrom(t, tpl)
	l, err := store.Open(ctx, url, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	alog, err := auditstore.Open(ctx, url, "", auditstore.Options{Now: func() time.Time { return clockAt }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	return l, alog
}

// newEnv is newEnvOn the SQLite stores.
func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	return newEnvOn(t, sqliteStore, opts...)
}

// newEnvOn fills fresh stores of st and serves the console over them,
// wired as ewp-mcp wires it (console/sources).
func newEnvOn(t testing.TB, st backend, opts ...envOpt) *env {
	t.Helper()
	ctx := context.Background()
	created := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	l, alog := st.open(t, func() time.Time { return created })
	if _, err := l.Put(ctx, append(quickstartViews(t), decode(t, backupV1))); err != nil {
		t.Fatal(err)
	}
	created = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	if _, err := l.Put(ctx, []*warrant.View{decode(t, backupV2)}); err != nil {
		t.Fatal(err)
	}
	doc, err := grounding.DecodeDocument(fixtures.DemoGraph)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graphstore.New(l, nil).Ingest(ctx, doc); err != nil {
		t.Fatal(err)
	}
	pol, err := edgepolicy.Load("filesystem-demo.cedar", fixtures.DemoPolicies)
	if err != nil {
		t.Fatal(err)
	}
	src, err := sources.For(l, alog)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, l: l, log: alog}
	e.seedDecisions()
	e.srv = newUnstarted()
	cfg := console.Config{
		Signer:        consoleKey.Signer,
		Policies:      pol,
		OperatorToken: testToken, Addr: e.srv.Listener.Addr().String(),
		Now: func() time.Time { return clockAt }, HeadPoll: 50 * time.Millisecond,
	}
	src.Apply(&cfg)
	for _, o := range opts {
		o(&cfg)
	}
	e.con, err = console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.con.Close() })
	mux := http.NewServeMux()
	mux.Handle(console.BasePath, e.con)
	e.srv.Config.Handler = mux
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.con.Ready(wctx); err != nil {
		t.Fatal("state summary never became ready:", err)
	}
	return e
}

// consoleKey is the console's operator key in the tests: its answers are
// signed as "console/OPERATOR".
var consoleKey = audittest.NewOperator("console")

func quickstartViews(t testing.TB) []*warrant.View {
	var doc struct {
		Views []json.RawMessage `json:"views"`
	}
	if err := json.Unmarshal(fixtures.QuickstartViews, &doc); err != nil {
		t.Fatal(err)
	}
	var out []*warrant.View
	for _, raw := range doc.Views {
		v, err := warrant.DecodeView(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// seedDecisions records what a gate would have: a MAY_ACT, a DENY and one
// REQUIRE_CONFIRMATION waiting for an operator.
func (e *env) seedDecisions() {
	base := clockAt.Add(-time.Hour)
	mk := func(i int, outcome audit.Outcome) *audit.Decision {
		return &audit.Decision{
			ID: fmt.Sprintf("0192f000-0000-7000-8000-%012d", i), Time: base.Add(time.Duration(i) * time.Minute),
			Tool: audit.ToolMayAct, Caller: audit.Caller{ClientName: "claude-code", Transport: "http", Role: "evaluate", Credential: "agent"},
			PropositionID: "P-api-cert-valid", ViewID: "example-cert-1", ActionKind: "delete", ToolName: "fs_delete",
			Concepts: []string{"delete", "file"}, ArgumentsHash: strings.Repeat("0f", 32), Outcome: outcome,
			Arguments: json.RawMessage(`{"path":"protected/other.txt","why":"\u003cscript\u003ealert(1)\u003c/script\u003e \u202etxt.exe"}`),
			PolicyIDs: []string{"protected_file"}, Risk: "high", Reversible: new(false), ViewHash: strings.Repeat("5e", 32),
			GraphVersion: 10, PolicySetHash: strings.Repeat("c1", 32),
			Layers: []audit.Layer{{Layer: "warrant", Decision: "MAY_ACT", Reasons: []string{"ACCEPTED"}},
				{Layer: "policy", Decision: audit.Verdict(outcome), Reasons: []string{"protected_file: Deleting protected files needs a human."}}},
		}
	}
	for i, o := range []audit.Outcome{audit.OutcomeMayAct, audit.OutcomeDeny, audit.OutcomeRequireConfirmation} {
		d := mk(i+1, o)
		if err := e.log.Record(context.Background(), d); err != nil {
			e.t.Fatal(err)
		}
		e.pending = d
	}
}

// record stores d as a gate would, failing t if the log refuses it.
func (e *env) record(t testing.TB, d *audit.Decision) {
	t.Helper()
	if err := e.log.Record(context.Background(), d); err != nil {
		t.Fatalf("record %s: %v", d.ID, err)
	}
}

// approvals reads the approvals of a decision, failing t if the log
// cannot: an empty answer must mean none, not a failed read.
func (e *env) approvals(t testing.TB, decisionID string) []audit.Approval {
	t.Helper()
	aps, err := e.log.ApprovalsFor(context.Background(), decisionID)
	if err != nil {
		t.Fatalf("approvals of %s: %v", decisionID, err)
	}
	return aps
}

// client is a browser stand-in: a cookie jar, no redirects followed
// automatically unless asked.
type client struct {
	t    testing.TB
	e    *env
	http *http.Client
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: e.t, e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *client) do(method, path string, form url.Values, hdr map[string]string) (int, string, http.Header) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.e.srv.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

func (c *client) get(path string) (int, string) {
	code, body, _ := c.do("GET", path, nil, nil)
	return code, body
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in page:\n%s", page)
	}
	return m[1]
}

// signIn signs the client in and returns the session's CSRF token.
func (c *client) signIn(name, token string) (int, string) {
	c.t.Helper()
	_, page := c.get("/console/login")
	code, body, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(c.t, page)}, "operator": {name}, "token": {token}}, nil)
	return code, body
}

func (c *client) mustSignIn() string {
	c.t.Helper()
	if code, body := c.signIn("Ada Operator", testToken); code != http.StatusSeeOther {
		c.t.Fatalf("sign in: %d\n%s", code, body)
	}
	code, page := c.get("/console/")
	if code != http.StatusOK {
		c.t.Fatalf("overview after sign in: %d", code)
	}
	return csrfOf(c.t, page)
}

func newUnstarted() *httptest.Server { return httptest.NewUnstartedServer(nil) }

func decode(t testing.TB, s string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// P-restic-snapshots has two snapshots: the first (stored 21 November)
// rests on a check of 21 November 08:00 with a five-day freshness policy,
// so it turns STALE after 26 November 08:00; the second (stored 28
// November) adds a fresh check.
const backupSrc = `{"source_id": "restic-%s", "lineage_id": "L-restic", "origin_type": "tool", "origin_locator": "restic check", "snapshot_id": "restic@%s", "content_hash": "sha256:%s", "observed_at": "%s"}`

var (
	backupAssert = `{"assertion_id": "a-restic", "text": "The restic repository holds last night's snapshots.", "asserted_by": "ops", "assertion_confidence": 0.9,
	  "asserted_at": "2026-11-21T07:00:00Z", "source": ` + fmt.Sprintf(backupSrc, "a", "a", "a", "2026-11-21T07:00:00Z") + `}`
	backupCheck1 = `{"check_id": "k-restic-1", "method": "tool_observation", "scope": "restic check", "subjects": ["restic"], "result": "supports",
	  "observed_at": "2026-11-21T08:00:00Z", "source": ` + fmt.Sprintf(backupSrc, "1", "1", "1", "2026-11-21T08:00:00Z") + `}`
	backupCheck2 = `{"check_id": "k-restic-2", "method": "tool_observation", "scope": "restic check", "subjects": ["restic"], "result": "supports",
	  "observed_at": "2026-11-28T08:30:00Z", "source": ` + fmt.Sprintf(backupSrc, "2", "2", "2", "2026-11-28T08:30:00Z") + `}`
	backupV1 = `{"proposition_id": "P-restic-snapshots", "view_id": "restic-1", "subjects": ["restic"], "freshness_policy_seconds": 432000,
	  "assertions": [` + backupAssert + `], "checks": [` + backupCheck1 + `]}`
	backupV2 = `{"proposition_id": "P-restic-snapshots", "view_id": "restic-2", "subjects": ["restic"], "freshness_policy_seconds": 432000,
	  "assertions": [` + backupAssert + `], "checks": [` + backupCheck1 + `, ` + backupCheck2 + `]}`
)
