package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
)

var credentialLine = regexp.MustCompile(`(?m)^ewp_agent_([A-Za-z0-9_-]{43})$`)

// TestAgentsAddListRevoke: add prints the credential once in its format,
// stores only its sha256, list shows the agent (never the credential),
// revoke makes the next lookup refuse it; a taken name and a bad name are
// refused with their exit codes.
func TestAgentsAddListRevoke(t *testing.T) {
	db, _ := seeded(t)
	out, _ := wantExit(t, exitOK, "agents", "add", "builder", "--group", "ci", "--group", "eu", "--db", db)
	m := credentialLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("add printed no credential line:\n%s", out)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(m[1]); err != nil || len(raw) != 32 {
		t.Fatalf("credential %q: %v", m[0], err)
	}
	cred := m[0]
	l, err := sqlite.Open(sqlite.DefaultPath(db), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := l.AgentByCredential(context.Background(), audit.CredentialSHA256(cred))
	if err != nil || r.Name != "builder" || strings.Join(r.Groups, ",") != "ci,eu" {
		t.Fatalf("stored agent: %+v %v", r, err)
	}
	list, _ := wantExit(t, exitOK, "agents", "list", "--db", db)
	if !strings.Contains(list, "builder") || !strings.Contains(list, "ci,eu") || !strings.Contains(list, "live") || strings.Contains(list, cred) {
		t.Fatalf("list:\n%s", list)
	}
	_, errs := wantExit(t, exitRefused, "agents", "add", "builder", "--db", db)
	if !strings.Contains(errs, "taken") {
		t.Errorf("a taken name: %s", errs)
	}
	_, errs = wantExit(t, exitUsage, "agents", "add", "bad\x1b[31mname", "--db", db)
	if strings.Contains(errs, "\x1b") || !strings.Contains(errs, "only ASCII letters") {
		t.Errorf("a bad name: %q", errs)
	}
	wantExit(t, exitOK, "agents", "revoke", "builder", "--db", db)
	if _, err := l.AgentByCredential(context.Background(), audit.CredentialSHA256(cred)); err == nil {
		t.Fatal("a revoked credential is still found")
	}
	list, _ = wantExit(t, exitOK, "agents", "list", "--db", db, "--json")
	var got struct{ Agents []audit.AgentRecord }
	if err := json.Unmarshal([]byte(list), &got); err != nil || len(got.Agents) != 1 || got.Agents[0].RevokedAt.IsZero() {
		t.Fatalf("list --json after revoke: %v\n%s", err, list)
	}
	wantExit(t, exitNotFound, "agents", "revoke", "nobody", "--db", db)
	out, _ = wantExit(t, exitOK, "agents", "add", "loader", "--ingest", "--db", db, "--json")
	var added struct {
		Name       string `json:"name"`
		Ingest     bool   `json:"ingest"`
		Credential string `json:"credential"`
	}
	if err := json.Unmarshal([]byte(out), &added); err != nil || !added.Ingest || !credentialLine.MatchString(added.Credential) {
		t.Fatalf("add --json: %v\n%s", err, out)
	}
	verify, _ := wantExit(t, exitOK, "verify", "--db", db)
	if !strings.Contains(verify, "2 agents, 1 revocation") {
		t.Errorf("verify: %s", verify)
	}
}

func TestAgentsHelpTeaches(t *testing.T) {
	out, _ := wantExit(t, exitOK, "agents", "--help")
	for _, w := range []string{"ewp_agent_", "ONCE", "sha256", "--group", "--ingest", "revoke", "EXAMPLES", "ewp_operator", "64"} {
		if !strings.Contains(out, w) {
			t.Errorf("agents --help lacks %q", w)
		}
	}
	out, _ = wantExit(t, exitOK, "agents", "add", "--help")
	if !strings.Contains(out, "USAGE") {
		t.Errorf("agents add --help:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "approve", "--help")
	if !strings.Contains(out, "--any-agent") {
		t.Error("approve --help lacks --any-agent")
	}
	wantExit(t, exitUsage, "agents")
	wantExit(t, exitUsage, "agents", "grant", "x")
}

// TestAgentShownAndApproveAnyAgent: a decision's agent is in list, show
// (escaped) and export; an approval is bound to it, and --any-agent
// widens it, both signed.
func TestAgentShownAndApproveAnyAgent(t *testing.T) {
	d1, d2 := pending("P-db", 1), pending("P-db", 2)
	d1.Agent, d1.AgentGroups = "builder", []string{"ci"}
	d2.Agent = "evil\x1b[31m"
	db, ds := seeded(t, d1, d2)
	list, _ := wantExit(t, exitOK, "list", "--db", db)
	if !strings.Contains(list, "builder") || strings.Contains(list, "\x1b") {
		t.Errorf("list:\n%q", list)
	}
	show, _ := wantExit(t, exitOK, "show", ds[1].ID, "--db", db)
	if !strings.Contains(show, "agent") || strings.Contains(show, "\x1b") || !strings.Contains(show, "evil") {
		t.Errorf("show:\n%q", show)
	}
	exp, _ := wantExit(t, exitOK, "export", "--db", db)
	if !strings.Contains(exp, `"agent":"builder"`) || !strings.Contains(exp, `"agent_groups":["ci"]`) || strings.Contains(exp, "\x1b") {
		t.Errorf("export:\n%q", exp)
	}
	out, _ := wantExit(t, exitOK, "approve", ds[0].ID, "--db", db, "--once", "--key", opKey("alice"), "--json")
	var bound audit.Approval
	if err := json.Unmarshal([]byte(out), &bound); err != nil || bound.Agent != "builder" || bound.AnyAgent {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	show, _ = wantExit(t, exitOK, "show", ds[0].ID, "--db", db)
	if !strings.Contains(show, "for agent builder") || !strings.Contains(show, "builder (groups ci)") {
		t.Errorf("show after approve:\n%s", show)
	}
	out, _ = wantExit(t, exitOK, "approve", ds[1].ID, "--db", db, "--once", "--any-agent", "--key", opKey("alice"))
	if !strings.Contains(out, "any agent") {
		t.Errorf("approve --any-agent:\n%s", out)
	}
	l, err := sqlite.Open(sqlite.DefaultPath(db), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	as, err := l.ApprovalsFor(context.Background(), ds[1].ID)
	if err != nil || len(as) != 1 || !as[0].AnyAgent || as[0].Agent != "" || !strings.Contains(string(as[0].SignedPayload()), `"any_agent":true`) {
		t.Fatalf("stored any-agent approval: %+v %v", as, err)
	}
}

// TestAgentsAddBeforeTheServer: beside an existing ledger, agents add
// creates the log; beside a mistyped one it creates nothing.
func TestAgentsAddBeforeTheServer(t *testing.T) {
	dir := t.TempDir()
	ledger := dir + "/ewp.sqlite"
	if err := os.WriteFile(ledger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wantExit(t, exitOK, "agents", "add", "builder", "--db", ledger)
	if _, err := os.Stat(sqlite.DefaultPath(ledger)); err != nil {
		t.Fatalf("no log beside the ledger: %v", err)
	}
	wantExit(t, exitLog, "agents", "add", "builder", "--db", dir+"/typo.sqlite")
	if _, err := os.Stat(sqlite.DefaultPath(dir + "/typo.sqlite")); err == nil {
		t.Fatal("a log was created beside a ledger that does not exist")
	}
}
