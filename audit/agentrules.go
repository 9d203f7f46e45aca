package audit

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Bounds of an agent record, checked by CheckAgent where one is added
// (every store): a name or group is 1 to MaxAgentNameBytes bytes of
// ASCII letters, digits, '.', '_' and '-', beginning with a letter or a
// digit (it is a Cedar entity id, a terminal's text and a log column, so
// nothing there needs escaping), and an agent has at most MaxAgentGroups
// groups.
const (
	MaxAgentNameBytes = 64
	MaxAgentGroups    = 32
)

// AgentCredentialPrefix starts every agent credential: the prefix, then
// the unpadded base64url of 32 random bytes (43 characters).
const AgentCredentialPrefix = "ewp_agent_"

// ErrInvalidAgent: an agent record that breaks a rule of CheckAgent (the
// message names the field and the rule).
var ErrInvalidAgent = errors.New("audit: invalid agent")

// NewAgentCredential makes a new agent credential and the sha256 hex of
// the whole string, which is all a store keeps of it.
func NewAgentCredential() (credential, sha256hex string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("make an agent credential: %w", err)
	}
	c := AgentCredentialPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return c, CredentialSHA256(c), nil
}

// CredentialSHA256 is the lower-case hex sha256 of a credential, the
// form Agents stores and AgentByCredential looks up.
func CredentialSHA256(credential string) string {
	sum := sha256.Sum256([]byte(credential))
	return hex.EncodeToString(sum[:])
}

// CheckAgentName checks one agent or group name (field names it in the
// error).
func CheckAgentName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalidAgent, field)
	case len(name) > MaxAgentNameBytes:
		return fmt.Errorf("%w: %s is %d bytes; at most %d", ErrInvalidAgent, field, len(name), MaxAgentNameBytes)
	case !isAlnum(name[0]):
		return fmt.Errorf("%w: %s %q must begin with a letter or a digit", ErrInvalidAgent, field, name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("%w: %s %q: only ASCII letters, digits, '.', '_' and '-' (byte %d is %q)", ErrInvalidAgent, field, AsJSON(name), i, c)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// CheckAgent is the rule every store applies in AddAgent: a valid name
// that is not Anonymous, valid and distinct groups (at most
// MaxAgentGroups), a credential hash of 64 lower-case hex digits, a
// creation time and no revocation yet. It fills CreatedAt (now, UTC) when
// zero.
func (r *AgentRecord) CheckAgent(now time.Time) error {
	if r == nil {
		return fmt.Errorf("%w: no agent given", ErrInvalidAgent)
	}
	if err := CheckAgentName("name", r.Name); err != nil {
		return err
	}
	if r.Name == Anonymous {
		return fmt.Errorf("%w: name %q is the principal of calls no credential names; choose another", ErrInvalidAgent, Anonymous)
	}
	if len(r.Groups) > MaxAgentGroups {
		return fmt.Errorf("%w: %d groups; at most %d", ErrInvalidAgent, len(r.Groups), MaxAgentGroups)
	}
	seen := map[string]bool{}
	for _, g := range r.Groups {
		if err := CheckAgentName("group", g); err != nil {
			return err
		}
		if seen[g] {
			return fmt.Errorf("%w: group %q is listed twice", ErrInvalidAgent, g)
		}
		seen[g] = true
	}
	if !isLowerSHA256Hex(r.CredentialSHA256) {
		return fmt.Errorf("%w: credential_sha256 must be 64 lower-case hex digits (the sha256 of the credential, CredentialSHA256)", ErrInvalidAgent)
	}
	if !r.RevokedAt.IsZero() {
		return fmt.Errorf("%w: a new agent is not revoked (revoked_at is set)", ErrInvalidAgent)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return nil
}

func isLowerSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') })
}

// Bounds of a Result, checked by CheckResult where one is recorded: a
// message of at most MaxResultMessageBytes (the store refuses a longer
// one; the gate cuts it first).
const MaxResultMessageBytes = 1024

// ErrInvalidResult: a result that breaks a rule of CheckResult.
var ErrInvalidResult = errors.New("audit: invalid result")

// CheckResult is the rule every store applies in RecordResult: a
// decision id, a known status, a sha256 of 64 lower-case hex digits or
// none, a bounded message; it fills Time (now) when zero and keeps it in
// UTC. Whether the decision is on record is the store's part.
func (r *Result) CheckResult(now time.Time) error {
	switch {
	case r == nil:
		return fmt.Errorf("%w: no result given", ErrInvalidResult)
	case r.DecisionID == "":
		return fmt.Errorf("%w: decision_id is empty", ErrInvalidResult)
	case r.Status != ResultOK && r.Status != ResultToolError && r.Status != ResultFailed && r.Status != ResultNotRun:
		return fmt.Errorf("%w: status %q: want ok, tool_error, failed or not_run", ErrInvalidResult, r.Status)
	case r.SHA256 != "" && !isLowerSHA256Hex(r.SHA256):
		return fmt.Errorf("%w: sha256 must be 64 lower-case hex digits or empty", ErrInvalidResult)
	case len(r.Message) > MaxResultMessageBytes:
		return fmt.Errorf("%w: message is %d bytes; at most %d", ErrInvalidResult, len(r.Message), MaxResultMessageBytes)
	}
	if r.Time.IsZero() {
		r.Time = now
	}
	r.Time = r.Time.UTC()
	return nil
}

// Bounds of a counter key (Counters.Add): 1 to MaxCounterKeyBytes bytes;
// n is 0 (read the count) to MaxCounterAdd.
const (
	MaxCounterKeyBytes = 256
	MaxCounterAdd      = 1 << 20
)

// CheckCounter is the rule every store applies in Counters.Add.
func CheckCounter(key string, n int64) error {
	switch {
	case key == "" || len(key) > MaxCounterKeyBytes:
		return fmt.Errorf("counter key is %d bytes: want 1 to %d", len(key), MaxCounterKeyBytes)
	case n < 0 || n > MaxCounterAdd:
		return fmt.Errorf("counter add %d: want 0 to %d", n, MaxCounterAdd)
	}
	return nil
}
