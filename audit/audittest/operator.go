package audittest

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Operator is a test operator: a key that signs approvals and the set of
// public keys a gate trusts it in. Its key is derived from its name, so
// every test process gets the same one.
type Operator struct {
	Signer *audit.Signer
	Keys   *audit.OperatorKeys
}

// NewOperator is the test operator named name (also the approver its
// approvals carry).
func NewOperator(name string) *Operator {
	seed := sha256.Sum256([]byte("ewp test operator key: " + name))
	s, err := audit.NewSigner(name, seed[:])
	if err != nil {
		panic(err)
	}
	keys, err := audit.NewOperatorKeys(audit.OperatorKey{Name: name, Public: s.Public()})
	if err != nil {
		panic(err)
	}
	return &Operator{Signer: s, Keys: keys}
}

// Sign signs a as an answer to decision d at time now (ewp-audit approve
// does the same before it stores it).
func (o *Operator) Sign(a *audit.Approval, d *audit.Decision, now time.Time) {
	if err := o.Signer.Sign(a, d, now); err != nil {
		panic(err)
	}
}

// Approve signs a (reading the decision it answers from l) and stores it.
func (o *Operator) Approve(ctx context.Context, l audit.Log, a *audit.Approval) error {
	d, err := l.Decision(ctx, a.DecisionID)
	if err != nil {
		return err
	}
	if err := o.Signer.Sign(a, d, time.Now()); err != nil {
		return err
	}
	return l.Approve(ctx, a)
}

// KeyFile writes the operator's private key into dir (mode 0600) and
// returns its path.
func (o *Operator) KeyFile(tb testing.TB, dir string) string {
	tb.Helper()
	path := filepath.Join(dir, o.Signer.Name+".key")
	if err := o.Signer.WriteFile(path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// KeysFile writes an operator keys file trusting the operators into dir
// and returns its path.
func KeysFile(tb testing.TB, dir string, ops ...*Operator) string {
	tb.Helper()
	body := "# test operator keys\n"
	for _, o := range ops {
		body += o.Signer.PublicLine() + "\n"
	}
	path := filepath.Join(dir, "operator-keys")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
