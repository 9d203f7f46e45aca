package audit_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

func signer(t testing.TB, name string) *audit.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte("sign_test " + name))
	s, err := audit.NewSigner(name, seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func trust(t testing.TB, ss ...*audit.Signer) *audit.OperatorKeys {
	t.Helper()
	var keys []audit.OperatorKey
	for _, s := range ss {
		keys = append(keys, audit.OperatorKey{Name: s.Name, Public: s.Public()})
	}
	k, err := audit.NewOperatorKeys(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signedAsStored is an approval alice signed, as a store reads it back
// from its JSON body.
func signedAsStored(t testing.TB, alice *audit.Signer, edit func(*audit.Approval)) *audit.Approval {
	t.Helper()
	a := &audit.Approval{DecisionID: "0190-d1", Verdict: audit.Approved, Note: "OPS-12", Once: true, Until: t0.Add(time.Hour)}
	if err := alice.Sign(a, answered(), t0); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(a)
	}
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back audit.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestSignatureBindsEveryField: a signed approval verifies after a trip
// through its stored JSON, in the key's name; changing any field it
// grants by, after signing, breaks the signature.
func TestSignatureBindsEveryField(t *testing.T) {
	alice := signer(t, "alice")
	keys := trust(t, alice)
	a := signedAsStored(t, alice, nil)
	if name, err := keys.Verify(a); err != nil || name != "alice" || a.Approver != "alice" || a.Action == nil || a.ID == "" {
		t.Fatalf("a signed approval: %q %v (%+v)", name, err, a)
	}
	edits := map[string]func(*audit.Approval){
		"approval_id": func(a *audit.Approval) { a.ID += "x" },
		"decision_id": func(a *audit.Approval) { a.DecisionID = "0190-d2" },
		"verdict":     func(a *audit.Approval) { a.Verdict = audit.Rejected },
		"approver":    func(a *audit.Approval) { a.Approver = "alice/mallory" },
		"note":        func(a *audit.Approval) { a.Note = "" },
		"created_at":  func(a *audit.Approval) { a.CreatedAt = a.CreatedAt.Add(time.Nanosecond) },
		"once":        func(a *audit.Approval) { a.Once = false },
		"scope":       func(a *audit.Approval) { a.Scope = &audit.Scope{PropositionID: "P-db"} },
		"until":       func(a *audit.Approval) { a.Until = time.Time{} },
		"action":      func(a *audit.Approval) { a.Action.ArgumentsHash = "ffff" },
		"concepts":    func(a *audit.Approval) { a.Action.Concepts = append(a.Action.Concepts, "users") },
		"signature": func(a *audit.Approval) {
			a.Signature = a.Signature[:10] + otherChar(a.Signature[10]) + a.Signature[11:]
		},
	}
	for field, edit := range edits {
		_, err := keys.Verify(signedAsStored(t, alice, edit))
		if !errors.Is(err, audit.ErrApprovalBadSignature) || audit.CodeOf(err) != audit.CodeApprovalBadSignature {
			t.Errorf("%s edited after signing: %v", field, err)
		}
	}
}

// otherChar is a base64 character other than c: the approval's id is
// random, so its signature is too, and a fixed replacement would leave
// one signature in 64 unchanged (CI met one).
func otherChar(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestVerifyRefusals(t *testing.T) {
	alice, mallory := signer(t, "alice"), signer(t, "mallory")
	keys := trust(t, alice)
	unsigned := signedAsStored(t, alice, func(a *audit.Approval) { a.Signature, a.KeyID = "", "" })
	if _, err := keys.Verify(unsigned); !errors.Is(err, audit.ErrApprovalUnsigned) {
		t.Errorf("unsigned: %v", err)
	}
	if _, err := keys.Verify(signedAsStored(t, mallory, nil)); !errors.Is(err, audit.ErrApprovalUnknownKey) {
		t.Errorf("an unknown key: %v", err)
	}
	var none *audit.OperatorKeys
	if _, err := none.Verify(signedAsStored(t, alice, nil)); !errors.Is(err, audit.ErrNoOperatorKeys) {
		t.Errorf("no keys: %v", err)
	}
	// A key's signature vouches for its own name only: bob's key, listed
	// under the name alice, cannot sign approvals in bob's name.
	bob := signer(t, "bob")
	k, err := audit.NewOperatorKeys(audit.OperatorKey{Name: "alice", Public: bob.Public()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(signedAsStored(t, bob, nil)); !errors.Is(err, audit.ErrApprovalBadSignature) || !strings.Contains(err.Error(), "not the signing key's name") {
		t.Errorf("approver other than the key's name: %v", err)
	}
	if err := alice.Sign(&audit.Approval{Approver: "bob"}, answered(), t0); !errors.Is(err, audit.ErrInvalidApproval) {
		t.Errorf("signing in another's name: %v", err)
	}
	console := signer(t, "console")
	a := &audit.Approval{DecisionID: "0190-d1", Verdict: audit.Approved, Once: true, Approver: "console/Ada"}
	if err := console.Sign(a, answered(), t0); err != nil {
		t.Fatal(err)
	}
	if name, err := trust(t, console).Verify(a); err != nil || name != "console" {
		t.Errorf("the console's KEY/OPERATOR approver: %q %v", name, err)
	}
}

// TestAdmitChecksTheSignedAction: the store keeps the action the operator
// signed, and refuses one that is not the answered decision's rather than
// rewrite it under the signature.
func TestAdmitChecksTheSignedAction(t *testing.T) {
	alice := signer(t, "alice")
	a := signedAsStored(t, alice, nil)
	if err := a.Admit(answered(), "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := trust(t, alice).Verify(a); err != nil {
		t.Fatalf("admitted, the signature no longer verifies: %v", err)
	}
	other := answered()
	other.ArgumentsHash = "ffff"
	b := signedAsStored(t, alice, nil)
	if err := b.Admit(other, "", t0); !errors.Is(err, audit.ErrInvalidApproval) || !strings.Contains(err.Error(), "arguments_hash") {
		t.Fatalf("an action other than the answered one: %v", err)
	}
}

func TestParseOperatorKeys(t *testing.T) {
	alice, bob := signer(t, "alice"), signer(t, "bob")
	good := "# operators\n\n" + alice.PublicLine() + "\n  " + bob.PublicLine() + "  \n"
	keys, err := audit.ParseOperatorKeys(strings.NewReader(good), "keys")
	if err != nil || keys.Len() != 2 {
		t.Fatalf("a good file: %v", err)
	}
	pub := strings.Fields(alice.PublicLine())[1]
	bad := map[string]string{
		"ed25519 " + pub:                                   "line 2: want",
		"rsa " + pub + " alice":                            "line 2: want",
		"ed25519 !!! alice":                                "line 2: the key is not 32 bytes",
		"ed25519 " + pub[:20] + " alice":                   "line 2: the key is not 32 bytes",
		alice.PublicLine() + "\n" + alice.PublicLine():     "line 3: name \"alice\" is already given to the key on line 2",
		alice.PublicLine() + "\ned25519 " + pub + " other": "line 3: the key is already listed as \"alice\"",
	}
	for body, want := range bad {
		_, err := audit.ParseOperatorKeys(strings.NewReader("# x\n"+body+"\n"), "keys")
		if err == nil || !strings.Contains(err.Error(), "operator keys keys "+want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestKeyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", ".ewp")
	path := filepath.Join(dir, "operator.key")
	s, err := audit.GenerateSigner("alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v", fi.Mode().Perm())
	}
	if err := s.WriteFile(path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("overwrote a key: %v", err)
	}
	back, err := audit.LoadSigner(path)
	if err != nil || back.Name != "alice" || back.KeyID() != s.KeyID() {
		t.Fatalf("load: %v", err)
	}
	raw, _ := os.ReadFile(path)
	secret := strings.Fields(strings.Split(strings.TrimSpace(string(raw)), "\n")[1])[1]
	if strings.Contains(s.PublicLine(), secret) {
		t.Error("the public line holds the private key")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.LoadSigner(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a key others can read: %v", err)
	}
	if _, err := audit.GenerateSigner("two words"); err == nil {
		t.Error("a key name with a space")
	}
}
