package auditchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/chain"
)

// VerifyReport is the result of walking a log.
type VerifyReport struct {
	Events    int64 `json:"events"`
	Decisions int64 `json:"decisions"`
	Approvals int64 `json:"approvals"`
	Uses      int64 `json:"approval_uses"`
	// The tables of agent identities and results, omitted when none (a
	// report of a log without them reads as it did before they existed).
	Agents      int64      `json:"agents,omitempty"`
	Revocations int64      `json:"agent_revocations,omitempty"`
	Results     int64      `json:"results,omitempty"`
	Head        audit.Head `json:"head"` // the last event checked
	// Broken is the first problem found, nil when the log is intact.
	Broken *Break `json:"broken,omitempty"`
}

// OK reports an intact log.
func (r VerifyReport) OK() bool { return r.Broken == nil }

// Break names the first broken or edited entry.
type Break struct {
	// Seq is the event's sequence number; 0 when the problem is a row no
	// event records, or the schema (a trigger).
	Seq    int64  `json:"event"`
	Table  string `json:"table"`
	RowSeq int64  `json:"row_seq,omitempty"`
	What   string `json:"what"`
}

func (b *Break) Error() string {
	if b.Seq == 0 {
		if b.RowSeq == 0 {
			return fmt.Sprintf("decision log broken: %s: %s", b.Table, b.What)
		}
		return fmt.Sprintf("decision log broken: %s row %d: %s", b.Table, b.RowSeq, b.What)
	}
	if b.RowSeq == 0 {
		return fmt.Sprintf("decision log broken at event %d: %s", b.Seq, b.What)
	}
	return fmt.Sprintf("decision log broken at event %d (%s row %d): %s", b.Seq, b.Table, b.RowSeq, b.What)
}

// Event is one chain entry as a store read it, with the row it names
// (nil when that row is gone).
type Event struct {
	Seq, RowSeq int64
	Table       string
	Payload     string
	Prev, Hash  []byte
	Decision    *DecisionRow
	Approval    *ApprovalRow
	Use         *Use
	// Row is the row of one of AgentTables (nil when gone).
	Row ChainedRow
	// FromBody marks an event whose payload was rebuilt from the
	// decision's body (a store that keeps no payload for decisions): a
	// link that fails then means an edited body or hash.
	FromBody bool
}

// Walker checks a chain event by event, in seq order, as a store reads
// it: the link, the row against what its event recorded, the body against
// its sha256 and the columns derived from it.
type Walker struct {
	Rep  *VerifyReport
	head []byte
	want *audit.Head
	// lastRow is the last row_seq recorded per table: each event names a
	// later row than the one before, so no row is recorded twice.
	lastRow map[string]int64
	// agents are the names added so far (a revocation names one of them,
	// once); once are the keys the approvals walked derive (OnceKeyOf).
	agents map[string]bool
	once   map[string]OnceKey
	// tail: checking one event alone (CheckTail), without the events
	// before it, so without the checks across rows.
	tail bool
}

// NewWalker starts a walk from the genesis; want, when not nil, is a head
// kept from before that the chain must still hold.
func NewWalker(rep *VerifyReport, want *audit.Head) *Walker {
	return &Walker{Rep: rep, head: Genesis(), want: want, lastRow: map[string]int64{}, agents: map[string]bool{}, once: map[string]OnceKey{}}
}

type breaker func(format string, args ...any) *Break

// Event checks one link and the row it records; nil when both hold.
func (v *Walker) Event(e *Event) *Break {
	v.Rep.Events++
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: e.Seq, Table: e.Table, RowSeq: e.RowSeq, What: fmt.Sprintf(format, args...)}
	}
	switch {
	case e.Seq != v.Rep.Events:
		return brk("event %d is missing (events jump from %d to %d)", v.Rep.Events, v.Rep.Events-1, e.Seq)
	case !bytes.Equal(e.Prev, v.head):
		return brk("prev_hash does not match the hash of event %d", e.Seq-1)
	case !bytes.Equal(e.Hash, Hash(e.Prev, []byte(e.Payload))) && e.FromBody:
		return brk("hash is not sha256(previous hash || payload rebuilt from the body): the decision's body or its hash was edited")
	case !bytes.Equal(e.Hash, Hash(e.Prev, []byte(e.Payload))):
		return brk("hash is not sha256(prev_hash || payload): the event itself was edited")
	}
	v.head = e.Hash
	v.Rep.Head = audit.Head{Seq: e.Seq, Hash: hex.EncodeToString(e.Hash)}
	if e.RowSeq <= v.lastRow[e.Table] {
		return brk("records %s row %d after row %d: rows are recorded once and in order", e.Table, e.RowSeq, v.lastRow[e.Table])
	}
	v.lastRow[e.Table] = e.RowSeq
	if w := v.want; w != nil && w.Seq == e.Seq && w.Hash != v.Rep.Head.Hash {
		return brk("the chain no longer holds the head %s: this event's hash is %s (the log was rewritten from here or before)", w, v.Rep.Head.Hash)
	}
	switch e.Table {
	case TableDecisions:
		return v.decisionRow(e, brk)
	case TableApprovals:
		return v.approvalRow(e, brk)
	case TableUses:
		return v.useRow(e, brk)
	case TableAgents, TableRevocations, TableResults:
		return v.chainedRow(e, brk)
	}
	return brk("unknown table %q", e.Table)
}

func (v *Walker) decisionRow(e *Event, brk breaker) *Break {
	v.Rep.Decisions++
	row := e.Decision
	if row == nil {
		return brk("the decision row this event records is gone")
	}
	if d := PayloadDiff(e.Payload, row.Payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if sum := sha256.Sum256(row.Body); !bytes.Equal(sum[:], row.BodySum) {
		return brk("body_sha256 column does not match the body: the decision's JSON was edited")
	}
	d, err := DecodeDecision(row.Body)
	if err != nil {
		return brk("%v", err)
	}
	derived := DecisionColumns(d, row.Body)
	derived.Seq = row.Seq
	if diff := PayloadDiff(string(derived.Payload()), row.Payload()); diff != "" {
		return brk("columns disagree with the body: %s", diff)
	}
	return nil
}

func (v *Walker) approvalRow(e *Event, brk breaker) *Break {
	v.Rep.Approvals++
	row := e.Approval
	if row == nil {
		return brk("the approval row this event records is gone")
	}
	if d := PayloadDiff(e.Payload, row.Payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if sum := sha256.Sum256(row.Body); !bytes.Equal(sum[:], row.BodySum) {
		return brk("body_sha256 column does not match the body: the approval's JSON was edited")
	}
	a, err := DecodeApproval(row.Body)
	if err != nil {
		return brk("%v", err)
	}
	derived := ApprovalColumns(a, row.Body)
	derived.Seq = row.Seq
	if diff := PayloadDiff(string(derived.Payload()), row.Payload()); diff != "" {
		return brk("columns disagree with the body: %s", diff)
	}
	if k, ok := OnceKeyOf(a, row.Seq); ok {
		v.once[k.ApprovalID] = k
	}
	return nil
}

// chainedRow checks a row of agents, agent_revocations or results.
func (v *Walker) chainedRow(e *Event, brk breaker) *Break {
	switch e.Table {
	case TableAgents:
		v.Rep.Agents++
	case TableRevocations:
		v.Rep.Revocations++
	default:
		v.Rep.Results++
	}
	if e.Row == nil {
		return brk("the %s row this event records is gone", e.Table)
	}
	if d := PayloadDiff(e.Payload, e.Row.Payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if d := e.Row.BodyCheck(); d != "" {
		return brk("columns disagree with the body: %s", d)
	}
	if v.tail {
		return nil
	}
	switch r := e.Row.(type) {
	case *AgentRow:
		if v.agents[r.Name] {
			return brk("agent %q is added a second time", r.Name)
		}
		v.agents[r.Name] = false
	case *RevocationRow:
		revoked, known := v.agents[r.Name]
		switch {
		case !known:
			return brk("revokes agent %q, which no earlier event adds", r.Name)
		case revoked:
			return brk("revokes agent %q a second time", r.Name)
		}
		v.agents[r.Name] = true
	}
	return nil
}

// OnceKeys checks a store's approval_keys rows (any order) against the
// keys the walked approvals derive: the same set, each equal. A missing
// key hides an approval from OnceApprovalFor, an added or edited one
// would point it elsewhere (a lookup re-reads the approval, so it could
// not grant more than the approval says).
func (v *Walker) OnceKeys(rows []OnceKey) *Break {
	brk := func(format string, args ...any) *Break {
		return &Break{Table: "approval_keys", What: fmt.Sprintf(format, args...)}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		want, ok := v.once[r.ApprovalID]
		switch {
		case !ok:
			return brk("a key names approval %q, which no chained once approval derives (inserted or edited behind the chain)", r.ApprovalID)
		case seen[r.ApprovalID]:
			return brk("approval %q has two keys", r.ApprovalID)
		case r != want:
			return brk("the key of approval %q is %+v, its approval derives %+v (edited)", r.ApprovalID, r, want)
		}
		seen[r.ApprovalID] = true
	}
	if len(seen) != len(v.once) {
		for id := range v.once {
			if !seen[id] {
				return brk("once approval %q has no key (deleted), so OnceApprovalFor cannot find it", id)
			}
		}
	}
	return nil
}

func (v *Walker) useRow(e *Event, brk breaker) *Break {
	v.Rep.Uses++
	if e.Use == nil {
		return brk("the approval use this event records is gone")
	}
	if d := PayloadDiff(e.Payload, e.Use.Payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	return nil
}

// HeadCheck, after the last event, finds a kept head that lies beyond the
// end of the chain.
func (v *Walker) HeadCheck() *Break {
	if w := v.want; w != nil && w.Seq > v.Rep.Events {
		return &Break{Seq: w.Seq, Table: "events", What: fmt.Sprintf("the chain ends at event %d, but head %s was recorded: events were cut off the end", v.Rep.Events, w)}
	}
	return nil
}

// Counted is how many rows of each chained table the walk found recorded.
// A table with more rows holds one inserted behind the chain.
func (v *Walker) Counted() map[string]int64 {
	return map[string]int64{TableDecisions: v.Rep.Decisions, TableApprovals: v.Rep.Approvals, TableUses: v.Rep.Uses,
		TableAgents: v.Rep.Agents, TableRevocations: v.Rep.Revocations, TableResults: v.Rep.Results}
}

// Orphan is the Break for a row no event records.
func Orphan(table string, rowSeq int64) *Break {
	return &Break{Table: table, RowSeq: rowSeq, What: "row is not recorded by any event (inserted behind the chain)"}
}

// PayloadDiff names the fields in which the recorded payload and the one
// rebuilt from the row differ; "" when they are equal. The ledger's chain
// words it the same way.
func PayloadDiff(recorded string, now []byte) string { return chain.PayloadDiff(recorded, now) }

// Check is one step of a store's Verify: a Break, or an I/O error.
type Check func() (*Break, error)

// RunChecks runs a store's checks in order and stops at the first
// problem: a Break is recorded in rep and returned as the error; an I/O
// error is returned through fail (which names the store).
func RunChecks(rep *VerifyReport, fail func(error) error, checks ...Check) error {
	for _, check := range checks {
		brk, err := check()
		if err != nil {
			return fail(err)
		}
		if brk != nil {
			rep.Broken = brk
			return brk
		}
	}
	return nil
}

// ChainedTables are the tables whose every row an event records.
var ChainedTables = []string{TableDecisions, TableApprovals, TableUses}

// Orphans finds rows that no event records (inserted behind the chain) in
// tables (ChainedTables, or those of them a store has not checked its own
// way). The walk found one distinct, existing row per event; so a table
// holds an orphan exactly when count says it has more rows than the chain
// has events for it, and only then is first (the lowest unrecorded seq,
// an unindexed search) asked.
func (v *Walker) Orphans(tables []string, count, first func(table string) (int64, error)) (*Break, error) {
	counted := v.Counted()
	for _, t := range tables {
		rows, err := count(t)
		if err != nil {
			return nil, err
		}
		if rows == counted[t] {
			continue
		}
		seq, err := first(t)
		if err != nil {
			return nil, err
		}
		return Orphan(t, seq), nil
	}
	return nil, nil
}

// Triggers checks a store's append-only triggers against the ones its
// schema creates (name to definition): without them the tables no longer
// refuse edits, even if none has been made yet.
type Triggers struct{ want map[string]string }

// NewTriggers starts the check; want is the store's own, and is consumed.
func NewTriggers(want map[string]string) *Triggers { return &Triggers{want: want} }

// Found checks one trigger the store holds: it must be one of the schema's
// and unaltered.
func (c *Triggers) Found(name, table, def string) *Break {
	exp, ok := c.want[name]
	switch {
	case !ok:
		return &Break{Table: table, What: fmt.Sprintf("trigger %s is not part of the log's schema: someone added it", name)}
	case exp != def:
		return &Break{Table: table, What: fmt.Sprintf("trigger %s was altered", name)}
	}
	delete(c.want, name)
	return nil
}

// Missing, after every trigger was Found, names those that were not.
// Trigger names begin table_no_.
func (c *Triggers) Missing() *Break {
	if len(c.want) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(c.want))
	tbl, _, _ := strings.Cut(names[0], "_no_")
	return &Break{Table: tbl, What: fmt.Sprintf("trigger %s is missing: the table no longer refuses edits", strings.Join(names, ", "))}
}
