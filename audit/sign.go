package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// An approval counts only when an operator's Ed25519 key signed it: the
// chain's hashes are unkeyed, so whoever can write the log (the server's
// own OS user, a replica's database role) could otherwise append a
// well-formed approval. The gate verifies the signature against the
// operator public keys it is configured with (OperatorKeys.Verify).

// signingDomain starts every signed payload, so an approval's signature
// can never be taken for a signature over anything else made with the
// same key.
const signingDomain = "ewp-approval-signature-v1\x00"

// signedApproval is every field of an approval the signature binds, in a
// fixed order. A field added to Approval that changes what it grants must
// be added here too (and only here): SignedPayload is the one encoding
// that ewp-audit, the console and the gate share.
type signedApproval struct {
	ID         string  `json:"approval_id"`
	DecisionID string  `json:"decision_id"`
	Verdict    string  `json:"verdict"`
	Approver   string  `json:"approver"`
	Note       string  `json:"note"`
	CreatedAt  string  `json:"created_at"`
	Once       bool    `json:"once"`
	Scope      *Scope  `json:"scope"`
	Until      string  `json:"until"`
	Action     *Action `json:"action"`
	KeyID      string  `json:"key_id"`
	// Added with agent identities, and omitted when empty, so the
	// payload of an approval without them is byte for byte what it was
	// before they existed (old signatures still verify).
	Agent    string `json:"agent,omitempty"`
	AnyAgent bool   `json:"any_agent,omitempty"`
}

// SignedPayload is what an approval's signature covers: a domain tag,
// then the canonical JSON of its id, decision, verdict, approver, note,
// creation time, once, scope, until, the answered action (what the
// operator saw), the signing key's id, and the agent it is bound to or
// any_agent (both omitted when empty: the payload of an approval without
// them is what it was before agent identities). Times are UTC with nanoseconds,
// as the stored body keeps them. Every string is taken in the form it
// reads back from the stored JSON (AsJSON: invalid UTF-8 as U+FFFD), so
// the approval as signed and as read back give the same bytes.
func (a *Approval) SignedPayload() []byte {
	s := signedApproval{ID: AsJSON(a.ID), DecisionID: AsJSON(a.DecisionID), Verdict: AsJSON(a.Verdict), Approver: AsJSON(a.Approver),
		Note: AsJSON(a.Note), CreatedAt: timeText(a.CreatedAt), Once: a.Once, Until: timeText(a.Until), KeyID: AsJSON(a.KeyID),
		Agent: AsJSON(a.Agent), AnyAgent: a.AnyAgent}
	if a.Scope != nil {
		s.Scope = a.Scope.jsonForm()
	}
	if a.Action != nil {
		s.Action = new(a.Action.jsonForm())
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings, bools and slices of strings always marshal
	}
	return append([]byte(signingDomain), b...)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// KeyID names an operator public key in an approval: "ed25519:" and the
// first 16 bytes of its sha256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:16])
}

// Why the gate does not trust an approval's signature. Each is a
// distinct error with a code (CodeOf), as the coverage refusals.
var (
	// ErrApprovalUnsigned: the approval carries no signature.
	ErrApprovalUnsigned = errors.New("audit: the approval is not signed by an operator key")
	// ErrApprovalBadSignature: the signature does not verify, the key is
	// not among the gate's operator keys, or the approver is not the
	// key's name.
	ErrApprovalBadSignature = errors.New("audit: the approval's signature does not verify")
	// ErrApprovalUnknownKey: the signing key is not one the gate trusts.
	ErrApprovalUnknownKey = errors.New("audit: the approval is signed by a key that is not an operator key")
	// ErrNoOperatorKeys: the gate has no operator keys, so it can verify
	// no approval.
	ErrNoOperatorKeys = errors.New("audit: no operator keys are configured")
	// ErrApprovalNotOnChain: the stored approval (or its use) is not what
	// the log's chain recorded.
	ErrApprovalNotOnChain = errors.New("audit: the approval is not what the log's chain recorded")
)

// OperatorKey is one trusted operator public key and the name the keys
// file gives it.
type OperatorKey struct {
	Name   string
	Public ed25519.PublicKey
}

// OperatorKeys are the public keys whose signatures make an approval
// count, by key id.
type OperatorKeys struct {
	byID map[string]OperatorKey
}

// Len is how many keys there are.
func (k *OperatorKeys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.byID)
}

// Trusts reports whether the key with id keyID is among k.
func (k *OperatorKeys) Trusts(keyID string) bool {
	_, ok := k.byID[keyID]
	return k.Len() > 0 && ok
}

// Approver names an approval may carry when signed by a key named key:
// the name itself, or the name, a slash and more (the console signs as
// "console/NAME", NAME being who signed in, which the shared operator
// token does not authenticate: the key vouches for its own name only).
func approverMatches(approver, key string) bool {
	return approver == key || strings.HasPrefix(approver, key+"/")
}

// Verify checks that a was signed by one of the keys over SignedPayload
// and that its approver is the key's name (or begins "NAME/"); it
// returns the key's name. The errors are *CoverageError with a reason of
// ErrApprovalUnsigned, ErrApprovalUnknownKey, ErrApprovalBadSignature or
// ErrNoOperatorKeys.
func (k *OperatorKeys) Verify(a *Approval) (string, error) {
	fail := func(reason error, format string, args ...any) error {
		return &CoverageError{ApprovalID: a.ID, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case k.Len() == 0:
		return "", fail(ErrNoOperatorKeys, "this server has no operator public keys (ewp-mcp --operator-keys FILE), so it can honour no approval")
	case a.Signature == "" || a.KeyID == "":
		return "", fail(ErrApprovalUnsigned, "the approval carries no operator signature (ewp-audit approve --key, or the console with its key, sign it)")
	}
	key, ok := k.byID[a.KeyID]
	if !ok {
		return "", fail(ErrApprovalUnknownKey, "key %s is not among this server's operator keys", AsJSON(a.KeyID))
	}
	sig, err := base64.StdEncoding.DecodeString(a.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(key.Public, a.SignedPayload(), sig) {
		return "", fail(ErrApprovalBadSignature, "the signature by key %s (%s) does not verify over the approval as stored: it was forged or edited", key.Name, a.KeyID)
	}
	if !approverMatches(a.Approver, key.Name) {
		return "", fail(ErrApprovalBadSignature, "approver %q is not the signing key's name %q", a.Approver, key.Name)
	}
	return key.Name, nil
}

// Signer is an operator's private key and the name it signs as.
type Signer struct {
	Name string
	priv ed25519.PrivateKey
}

// NewSigner makes a signer from a 32-byte Ed25519 seed.
func NewSigner(name string, seed []byte) (*Signer, error) {
	if err := checkKeyName(name); err != nil {
		return nil, err
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("an Ed25519 private key seed has %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	return &Signer{Name: name, priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.priv.Public().(ed25519.PublicKey) }

// KeyID is the signer's key id.
func (s *Signer) KeyID() string { return KeyID(s.Public()) }

// SignsAs reports whether an approval signed by s may carry approver: the
// key's name, or the name, a slash and more.
func (s *Signer) SignsAs(approver string) bool { return approverMatches(approver, s.Name) }

// PublicLine is the line an operator adds to the server's operator keys
// file for this key.
func (s *Signer) PublicLine() string {
	return "ed25519 " + base64.StdEncoding.EncodeToString(s.Public()) + " " + s.Name
}

// Sign fills what a store would otherwise fill (an id, the creation time
// now, the answered decision's action, what the operator saw, and its
// agent unless a.AnyAgent) and the
// key id, and signs the approval: the store keeps these as they are
// (Admit checks the action against the answered decision). An empty
// approver becomes the key's name; another approver must begin with it.
func (s *Signer) Sign(a *Approval, answered *Decision, now time.Time) error {
	if a.Approver == "" {
		a.Approver = s.Name
	}
	if !approverMatches(a.Approver, s.Name) {
		return fmt.Errorf("%w: approver %q is not the operator key's name %q; leave the approver out, or name the key's owner", ErrInvalidApproval, a.Approver, s.Name)
	}
	a.fillIdentity(now)
	a.Action = new(answered.Action())
	a.Agent = ""
	if !a.AnyAgent {
		a.Agent = answered.Agent
	}
	a.KeyID = s.KeyID()
	a.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, a.SignedPayload()))
	return nil
}

// checkKeyName refuses a key name that would not survive a keys file
// line or a terminal: empty, with white space, or with control
// characters.
func checkKeyName(name string) error {
	if name == "" {
		return errors.New("an operator key needs a name (the approver it signs as)")
	}
	if strings.ContainsFunc(name, isBadNameRune) {
		return fmt.Errorf("operator key name %q: no spaces or control characters", name)
	}
	return nil
}

// NewOperatorKeys trusts the given keys (tests, and callers that build
// the set without a file); names and keys must be unique.
func NewOperatorKeys(keys ...OperatorKey) (*OperatorKeys, error) {
	out := &OperatorKeys{byID: map[string]OperatorKey{}}
	names := map[string]bool{}
	for _, k := range keys {
		if err := checkKeyName(k.Name); err != nil {
			return nil, err
		}
		if len(k.Public) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("operator key %q: an Ed25519 public key has %d bytes", k.Name, ed25519.PublicKeySize)
		}
		id := KeyID(k.Public)
		if _, dup := out.byID[id]; dup || names[k.Name] {
			return nil, fmt.Errorf("operator key %q is listed twice", k.Name)
		}
		names[k.Name] = true
		out.byID[id] = k
	}
	return out, nil
}
