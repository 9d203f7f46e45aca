package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// draft is a decision being made: the gate fills it in as it learns what
// it judges, and finish records it with the outcome.
//
// An evaluation that may be abandoned at its deadline fills a draft of
// its own (fork) and hands it over only when it answers in time (adopt);
// at the deadline the call records a copy taken under mu (snapshot), so
// what the evaluation writes afterwards reaches no record. Every write of
// the evaluation goes through update.
type draft struct {
	// mu guards the fields an evaluation writes against snapshot.
	mu sync.Mutex
	d  audit.Decision
	// axes is the warrant the warrant layer judged; the record keeps it as
	// that layer's detail so a replay can answer with it.
	axes any
	// replay is set when the call answered an earlier decision under its
	// idempotency key: nothing new is recorded.
	replay bool
	// unlock releases the call's idempotency key (see keyLocks); nil when
	// it holds none.
	unlock func()
	// usesOnce: the single-use approval d.ApprovalID lifts the decision,
	// which is then recorded together with the approval's use
	// (audit.Log.RecordUse) if it is MAY_ACT.
	usesOnce bool
}

// update applies fn to the draft under its lock: the evaluation's writes.
func (dr *draft) update(fn func(*draft)) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	fn(dr)
}

// fork is a draft for an evaluation that may be abandoned: what dr holds
// so far, written by the evaluation alone.
func (dr *draft) fork() *draft {
	return &draft{d: dr.d}
}

// adopt takes over what the evaluation of work found once it answered:
// work is no longer written, and its idempotency key's lock passes to dr.
func (dr *draft) adopt(work *draft) {
	dr.d, dr.axes, dr.replay, dr.usesOnce = work.d, work.axes, work.replay, work.usesOnce
	dr.unlock, work.unlock = work.unlock, nil
}

// snapshot takes what the abandoned evaluation of work had noted of its
// call (the proposition, the action, the view), for the timeout refusal's
// record; work keeps its key's lock, which the evaluation releases when
// it ends.
func (dr *draft) snapshot(work *draft) {
	work.mu.Lock()
	defer work.mu.Unlock()
	dr.d, dr.axes = work.d, work.axes
}

// release ends the call's hold on its idempotency key, if any. Decide
// defers it, so a key is released even when the evaluation panics.
func (dr *draft) release() {
	if dr != nil && dr.unlock != nil {
		dr.unlock()
		dr.unlock = nil
	}
}

// takeID gives the decision its decision_id unless it has one. It is
// taken as late as possible, just before the decision is recorded: the
// SQLite log finds a decision whose id is greater than every id recorded
// before it without a row of its own, so ids taken in recording order
// keep nearly every decision off that path.
func (dr *draft) takeID() error {
	if dr.d.ID != "" {
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return errors.New("no decision_id could be generated (the system's random source failed), so the call is not answered")
	}
	dr.d.ID = id.String()
	return nil
}

// keyLocks serialises the calls of one idempotency key within the gate,
// from the look-up until the decision is recorded. Without it two
// concurrent retries could both decide; the log's unique key makes one of
// them answer the other's decision, and the loser would be decided
// twice.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	mu      sync.Mutex
	waiters int
}

// lock takes key's lock and returns its release.
func (k *keyLocks) lock(key string) func() {
	k.mu.Lock()
	if k.held == nil {
		k.held = map[string]*keyLock{}
	}
	l := k.held[key]
	if l == nil {
		l = &keyLock{}
		k.held[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}

// viewHashes caches the canonical hash of the snapshots judged. A ledger
// keeps a snapshot immutable under its (proposition_id, view_id), so the
// hash of one is computed once instead of re-serialising the view on
// every call — a tenth of may_act's work otherwise. The cache is bounded:
// when full it starts over.
type viewHashes struct {
	mu sync.Mutex
	m  map[string]string
}

const viewHashesMax = 4096

func (c *viewHashes) viewHash(pid string, v *warrant.View) string {
	key := pid + "\x00" + v.ViewID
	c.mu.Lock()
	h, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return h
	}
	sum := sha256.Sum256(warrant.Canonical(v))
	h = hex.EncodeToString(sum[:])
	c.mu.Lock()
	if c.m == nil || len(c.m) >= viewHashesMax {
		c.m = make(map[string]string)
	}
	c.m[key] = h
	c.mu.Unlock()
	return h
}

// riskPolicies keeps the JSON of the last risk policy a decision was
// recorded under. Nearly every call is judged under the same one (the
// default; only an ingest caller may send another), and encoding it by
// reflection on every record was a tenth of the record's cost. The
// record reads back the same either way: a JSON object.
type riskPolicies struct {
	last atomic.Pointer[encodedPolicy]
}

type encodedPolicy struct {
	p   warrant.RiskPolicy
	raw audit.CompactJSON
}

// encoded returns p as the decision records it: its cached JSON when p is
// the policy seen last, else p itself encoded now (and kept).
func (c *riskPolicies) encoded(p warrant.RiskPolicy) any {
	if e := c.last.Load(); e != nil && e.p == p {
		return e.raw
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return p // cannot happen for strings and bools; the record encodes p itself
	}
	c.last.Store(&encodedPolicy{p: p, raw: raw})
	return audit.CompactJSON(raw)
}

// AxesJSON is the warrant's axes as json.Marshal writes them, for the
// record: written field by field, since every recorded may_act carries
// them and reflection over them was a tenth of the record's cost. A
// strength encoding/json would write in exponent form or refuse goes
// through json.Marshal itself.
func AxesJSON(a warrant.Axes) any {
	if !plainFloat(a.Strength) {
		return a
	}
	b := append(make([]byte, 0, 384), '{')
	for i, f := range []struct{ k, v string }{{"acceptance", a.Acceptance}, {"conflict", a.Conflict},
		{"verification", a.Verification}, {"currency", a.Currency}, {"sufficiency", a.Sufficiency}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = audit.AppendJSONString(append(audit.AppendJSONString(b, f.k), ':'), f.v)
	}
	b = strconv.AppendFloat(append(b, `,"strength":`...), a.Strength, 'f', -1, 64)
	b = append(b, `,"rationale_codes":`...)
	if a.RationaleCodes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range a.RationaleCodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = audit.AppendJSONString(b, c)
		}
		b = append(b, ']')
	}
	return audit.CompactJSON(append(b, '}'))
}

// plainFloat is a float encoding/json writes in strconv's 'f' form.
func plainFloat(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	abs := math.Abs(f)
	return abs == 0 || (abs >= 1e-6 && abs < 1e21)
}

// An action's arguments are recorded twice in its decision: by hash
// (arguments_hash, over the whole canonical arguments: what an approval
// binds) and as text for whoever answers it (arguments), so that an
// operator approving the deletion of protected/other.txt reads that path,
// not a hash. The text is bounded and redacted: the value of every member
// whose name contains one of the operator's redacted names, at any depth,
// is replaced by RedactedMarker.

// DefaultRedactedArguments are the member names redacted when the
// operator names none: a member is redacted when its name, ignoring case,
// contains one of them (access_token, X-Api-Key, db_password, …).
var DefaultRedactedArguments = []string{
	"password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "api-key",
	"private_key", "authorization", "cookie", "credential", "session",
}

// RedactedMarker replaces a redacted member's value.
const RedactedMarker = "[redacted]"

// MaxRecordedArgumentsBytes bounds the recorded arguments' JSON text.
// Longer arguments are recorded as a JSON string holding the first
// MaxRecordedArgumentsBytes bytes of their (redacted) text, with
// arguments_truncated; the hash still covers them whole.
const MaxRecordedArgumentsBytes = 4096

// redactor redacts the members whose names contain one of names
// (lower case).
type redactor struct{ names []string }

func newRedactor(names []string) redactor {
	if names == nil {
		names = DefaultRedactedArguments
	}
	r := redactor{}
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			r.names = append(r.names, n)
		}
	}
	return r
}

func (r redactor) redacts(key string) bool {
	k := strings.ToLower(key)
	for _, n := range r.names {
		if strings.Contains(k, n) {
			return true
		}
	}
	return false
}

// apply returns v with every redacted member's value replaced, at any
// depth; v itself is left as it was (it is also what was hashed).
func (r redactor) apply(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if r.redacts(k) {
				out[k] = RedactedMarker
			} else {
				out[k] = r.apply(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = r.apply(val)
		}
		return out
	}
	return v
}

// recorded is arguments as the decision records them: redacted, encoded
// as encoding/json writes them (the record's encoder copies them), and
// bounded; truncated says they were cut.
func (r redactor) recorded(arguments map[string]any) (text json.RawMessage, truncated bool) {
	b, err := json.Marshal(r.apply(arguments))
	if err != nil {
		return nil, false // decoded from JSON with UseNumber: unreachable
	}
	return capRecorded(b)
}

// capRecorded bounds recorded arguments b at MaxRecordedArgumentsBytes:
// longer ones become a JSON string of their first bytes, cut at a
// character boundary.
func capRecorded(b []byte) (json.RawMessage, bool) {
	if len(b) <= MaxRecordedArgumentsBytes {
		return b, false
	}
	cut := MaxRecordedArgumentsBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	s, _ := json.Marshal(string(b[:cut]))
	return s, true
}

// ArgumentsHash is the sha256 (hex) of action.arguments as canonical JSON:
// object keys sorted, no insignificant whitespace, numbers exactly as
// sent, no HTML escaping. Two calls with the same arguments hash alike
// however their keys were ordered.
func ArgumentsHash(args map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(args) // decoded from JSON with UseNumber: always encodable
	return sha256Hex(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// MaxRecordedMessageBytes bounds the message recorded with a refusal; a
// longer one (it may quote argument names, which are not capped
// otherwise) is recorded cut, with a note of how much was cut. The
// caller's answer keeps the whole message.
const MaxRecordedMessageBytes = 1024

// recordedMessage is msg as the decision log keeps it: at most
// MaxRecordedMessageBytes, cut at a character boundary.
func recordedMessage(msg string) string {
	if len(msg) <= MaxRecordedMessageBytes {
		return msg
	}
	keep := MaxRecordedMessageBytes - 32
	for keep > 0 && !utf8.RuneStart(msg[keep]) {
		keep--
	}
	return msg[:keep] + "… (" + strconv.Itoa(len(msg)-keep) + " bytes cut)"
}

// Filled sets every nil list of w (which the caller owns) to an empty
// one, so an answer always matches its schema (a list, never null)
// whatever the kernel allocates.
func Filled(w *warrant.WarrantView) *warrant.WarrantView {
	for _, l := range []*[]string{&w.SupportingEvidenceIDs, &w.OpposingEvidenceIDs, &w.Checks,
		&w.OpenConflicts, &w.ResolvedConflicts, &w.OmittedSources, &w.DerivedFrom,
		&w.Supersedes, &w.SupersededBy, &w.FalsificationConditions, &w.Warrant.RationaleCodes} {
		if *l == nil {
			*l = []string{}
		}
	}
	return w
}

// CachedViewHashes is how many view hashes the gate computed and keeps
// (a HashedLedger's own are not among them): for tests and metrics.
func (g *Gate) CachedViewHashes() int {
	if g.st == nil {
		return 0
	}
	c := &g.st.hashes
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
