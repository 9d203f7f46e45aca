package audit_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// agentDecision is answered() made for agent "builder".
func agentDecision() *audit.Decision {
	d := answered()
	d.Agent, d.AgentGroups = "builder", []string{"ci"}
	return d
}

func TestAdmitBindsTheAgent(t *testing.T) {
	d := agentDecision()
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := a.Admit(d, "", t0); err != nil || a.Agent != "builder" || a.AnyAgent {
		t.Fatalf("admit: %v, agent %q any %v", err, a.Agent, a.AnyAgent)
	}
	wide := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true, AnyAgent: true}
	if err := wide.Admit(d, "", t0); err != nil || wide.Agent != "" {
		t.Fatalf("admit any agent: %v, agent %q", err, wide.Agent)
	}
	both := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true, AnyAgent: true, Agent: "builder"}
	if err := both.Admit(d, "", t0); !errors.Is(err, audit.ErrInvalidApproval) {
		t.Fatalf("agent and any_agent: %v", err)
	}
	other := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true, Agent: "intruder"}
	err := other.Admit(d, "", t0)
	if !errors.Is(err, audit.ErrInvalidApproval) || !errors.Is(err, audit.ErrApprovalWrongAgent) || audit.CodeOf(err) != audit.CodeApprovalWrongAgent {
		t.Fatalf("bound to another agent: %v (code %q)", err, audit.CodeOf(err))
	}
}

func TestCoversRefusesAnotherAgent(t *testing.T) {
	d := agentDecision()
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := a.Admit(d, "", t0); err != nil {
		t.Fatal(err)
	}
	if err := a.Covers(agentDecision(), t0); err != nil {
		t.Fatalf("the same agent: %v", err)
	}
	call := agentDecision()
	call.Agent = "intruder"
	err := a.Covers(call, t0)
	var ce *audit.CoverageError
	if !errors.Is(err, audit.ErrApprovalWrongAgent) || !errors.As(err, &ce) || ce.Code() != "EWP_REFUSE_APPROVAL_AGENT" ||
		!strings.Contains(err.Error(), `"builder"`) || !strings.Contains(err.Error(), `"intruder"`) {
		t.Fatalf("another agent: %v", err)
	}
	a.Agent, a.AnyAgent = "", true
	if err := a.Covers(call, t0); err != nil {
		t.Fatalf("any agent: %v", err)
	}
}

// TestSignedPayloadWithoutAgentUnchanged: an approval with no agent and
// no any_agent signs the very bytes it signed before agent identities
// (the payload ends with key_id), and the binding is signed when set.
func TestSignedPayloadWithoutAgentUnchanged(t *testing.T) {
	a := onceApproval()
	a.KeyID = "ed25519:00"
	p := string(a.SignedPayload())
	if !strings.HasSuffix(p, `,"key_id":"ed25519:00"}`) || strings.Contains(p, "agent") {
		t.Fatalf("payload without agent: %s", p)
	}
	a.Agent = "builder"
	if q := string(a.SignedPayload()); !strings.HasSuffix(q, `"key_id":"ed25519:00","agent":"builder"}`) {
		t.Fatalf("payload with agent: %s", q)
	}
	a.Agent, a.AnyAgent = "", true
	if q := string(a.SignedPayload()); !strings.HasSuffix(q, `"key_id":"ed25519:00","any_agent":true}`) {
		t.Fatalf("payload with any_agent: %s", q)
	}
}

func TestSignatureBindsTheAgent(t *testing.T) {
	alice := signer(t, "alice")
	keys := trust(t, alice)
	d := agentDecision()
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}
	if err := alice.Sign(a, d, t0); err != nil || a.Agent != "builder" {
		t.Fatalf("sign: %v, agent %q", err, a.Agent)
	}
	if _, err := keys.Verify(a); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func(*audit.Approval){
		func(a *audit.Approval) { a.Agent = "intruder" },
		func(a *audit.Approval) { a.Agent, a.AnyAgent = "", true },
	} {
		c := *a
		edit(&c)
		if _, err := keys.Verify(&c); !errors.Is(err, audit.ErrApprovalBadSignature) {
			t.Errorf("agent binding edited after signing: %v", err)
		}
	}
}

func TestNewAgentCredential(t *testing.T) {
	c, sum, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, "ewp_agent_"))
	want := sha256.Sum256([]byte(c))
	if !strings.HasPrefix(c, "ewp_agent_") || len(c) != len("ewp_agent_")+43 || err != nil || len(raw) != 32 ||
		sum != hex.EncodeToString(want[:]) || audit.CredentialSHA256(c) != sum {
		t.Fatalf("credential %q, sum %s, %v", c, sum, err)
	}
	c2, _, _ := audit.NewAgentCredential()
	if c2 == c {
		t.Fatal("two credentials are equal")
	}
}

func TestCheckAgent(t *testing.T) {
	_, sum, _ := audit.NewAgentCredential()
	good := func() *audit.AgentRecord {
		return &audit.AgentRecord{Name: "builder-1", Groups: []string{"ci", "eu.west"}, CredentialSHA256: sum}
	}
	r := good()
	if err := r.CheckAgent(t0); err != nil || !r.CreatedAt.Equal(t0) {
		t.Fatalf("good agent: %v", err)
	}
	many := make([]string, audit.MaxAgentGroups+1)
	for i := range many {
		many[i] = "g" + strings.Repeat("x", i)
	}
	bad := map[string]func(*audit.AgentRecord){
		"empty name":      func(r *audit.AgentRecord) { r.Name = "" },
		"long name":       func(r *audit.AgentRecord) { r.Name = strings.Repeat("a", audit.MaxAgentNameBytes+1) },
		"space":           func(r *audit.AgentRecord) { r.Name = "a b" },
		"escape":          func(r *audit.AgentRecord) { r.Name = "a\x1b[31m" },
		"leading dot":     func(r *audit.AgentRecord) { r.Name = ".a" },
		"anonymous":       func(r *audit.AgentRecord) { r.Name = audit.Anonymous },
		"bad group":       func(r *audit.AgentRecord) { r.Groups = []string{"ok", "not ok"} },
		"twice":           func(r *audit.AgentRecord) { r.Groups = []string{"ci", "ci"} },
		"too many groups": func(r *audit.AgentRecord) { r.Groups = many },
		"upper hex":       func(r *audit.AgentRecord) { r.CredentialSHA256 = strings.ToUpper(sum) },
		"short hash":      func(r *audit.AgentRecord) { r.CredentialSHA256 = sum[:10] },
		"revoked":         func(r *audit.AgentRecord) { r.RevokedAt = t0 },
	}
	for name, edit := range bad {
		r := good()
		edit(r)
		if err := r.CheckAgent(t0); !errors.Is(err, audit.ErrInvalidAgent) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := (&audit.AgentRecord{Name: strings.Repeat("a", audit.MaxAgentNameBytes), CredentialSHA256: sum}).CheckAgent(t0); err != nil {
		t.Errorf("a name of exactly the bound: %v", err)
	}
}

func TestCheckResultAndCounter(t *testing.T) {
	r := &audit.Result{DecisionID: "d1", Status: audit.ResultOK}
	if err := r.CheckResult(t0); err != nil || !r.Time.Equal(t0) {
		t.Fatal(err)
	}
	for name, r := range map[string]*audit.Result{
		"no decision": {Status: audit.ResultOK},
		"status":      {DecisionID: "d1", Status: "fine"},
		"sha256":      {DecisionID: "d1", Status: audit.ResultOK, SHA256: "xyz"},
		"message":     {DecisionID: "d1", Status: audit.ResultFailed, Message: strings.Repeat("m", audit.MaxResultMessageBytes+1)},
	} {
		if err := r.CheckResult(t0); !errors.Is(err, audit.ErrInvalidResult) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if audit.CheckCounter("k", 1) != nil || audit.CheckCounter("", 1) == nil || audit.CheckCounter(strings.Repeat("k", audit.MaxCounterKeyBytes+1), 1) == nil ||
		audit.CheckCounter("k", -1) == nil || audit.CheckCounter("k", audit.MaxCounterAdd+1) == nil {
		t.Error("counter bounds")
	}
	_ = time.Second
}
