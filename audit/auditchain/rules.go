package auditchain

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// DefaultLimit is List's page size when the filter gives none.
const DefaultLimit = 100

// Query is a Filter with the stores' extras.
type Query struct {
	audit.Filter
	// NewestFirst walks from the latest decision back; After then means
	// "older than".
	NewestFirst bool
	// ApprovalID selects the decisions that presented this approval.
	ApprovalID string
}

// CheckDecision refuses what no gate call produces.
func CheckDecision(d *audit.Decision) error {
	switch {
	case d == nil:
		return errors.New("record decision: nil decision")
	case d.Tool == "":
		return errors.New("record decision: tool is empty (may_act or check_grounding)")
	}
	if d.Outcome.Valid() {
		return nil
	}
	return fmt.Errorf("record decision: outcome %q is not one of MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED, ANSWERED", d.Outcome)
}

// KnownOutcome reports one of the five outcomes.
func KnownOutcome(o string) bool { return audit.Outcome(o).Valid() }

// CheckUse refuses a decision that cannot use an approval (RecordUse):
// only a MAY_ACT decision presenting one does.
func CheckUse(d *audit.Decision) error {
	if err := CheckDecision(d); err != nil {
		return err
	}
	switch {
	case d.Outcome != audit.OutcomeMayAct:
		return fmt.Errorf("%w: decision %s is %s; it is recorded without using approval %s", audit.ErrNotMayAct, d.ID, d.Outcome, d.ApprovalID)
	case d.ApprovalID == "":
		return fmt.Errorf("%w: decision %s presents no approval_id to use", audit.ErrInvalidApproval, d.ID)
	}
	return nil
}

// Used is the refusal of a once approval already used by decision by.
func Used(approvalID, by string) error {
	return &audit.CoverageError{ApprovalID: approvalID, Reason: audit.ErrApprovalUsed,
		Detail: fmt.Sprintf("a once approval was already used by decision %s; ask for a new confirmation", by)}
}

// IsRefusal reports the log's own refusals (audit.Err*, coverage), which
// a store returns as they are, unlike storage failures.
func IsRefusal(err error) bool {
	var ce *audit.CoverageError
	for _, e := range []error{audit.ErrNotFound, audit.ErrDuplicateKey, audit.ErrInvalidApproval, audit.ErrNotPending, audit.ErrAnswered, audit.ErrNotMayAct,
		audit.ErrAgentExists, audit.ErrInvalidAgent, audit.ErrInvalidResult} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.As(err, &ce)
}

// DecodeDecision reads a stored decision body.
func DecodeDecision(body []byte) (*audit.Decision, error) {
	d := new(audit.Decision)
	if err := json.Unmarshal(body, d); err != nil {
		return nil, fmt.Errorf("stored decision does not decode: %w", err)
	}
	return d, nil
}

// DecodeApproval reads a stored approval body.
func DecodeApproval(body []byte) (*audit.Approval, error) {
	a := new(audit.Approval)
	if err := json.Unmarshal(body, a); err != nil {
		return nil, fmt.Errorf("stored approval does not decode: %w", err)
	}
	return a, nil
}

// Record is a decision made ready for a store's writer: its row, and its
// payload cut around seq (SplitPayload), which only the writer knows.
type Record struct {
	Row       DecisionRow
	Pre, Post []byte
}

// PrepareRecord readies d for Record on either store: it refuses what no
// gate call produces, fills an empty ID (newID) and Time (now), stores the
// time in UTC and builds the row and its payload. The store passes its
// clock and audit.NewID, so this package reads neither.
func PrepareRecord(d *audit.Decision, now func() time.Time, newID func() string) (Record, error) {
	return PrepareRecordIn(d, now, newID, nil)
}

// Buffers are the byte slices a Record's body and payload are written
// into; a store that copies both before its writer's commit returns may
// reuse them for the next Record (less garbage on the hot path).
type Buffers struct{ Body, Payload []byte }

// PrepareRecordIn is PrepareRecord writing into buf's slices (from their
// start) when buf is not nil; the Record then points into them.
func PrepareRecordIn(d *audit.Decision, now func() time.Time, newID func() string, buf *Buffers) (Record, error) {
	if err := CheckDecision(d); err != nil {
		return Record{}, err
	}
	if d.ID == "" {
		d.ID = newID()
	}
	if d.Time.IsZero() {
		d.Time = now()
	}
	d.Time = d.Time.UTC()
	if buf == nil {
		buf = &Buffers{}
	}
	body, err := AppendDecision(buf.Body[:0], d)
	if err != nil {
		return Record{}, fmt.Errorf("record decision %s: its JSON cannot be written: %w", d.ID, err)
	}
	r := Record{Row: DecisionColumns(d, body)}
	buf.Body, buf.Payload = body, r.Row.AppendPayload(buf.Payload[:0])
	r.Pre, r.Post = SplitPayload(buf.Payload)
	return r, nil
}
