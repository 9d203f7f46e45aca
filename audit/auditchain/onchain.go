package auditchain

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit"
)

// ChainEntry is the event a store found recording a row: its payload and
// link; Found is false when no event records the row.
type ChainEntry struct {
	Found      bool
	Payload    string
	Prev, Hash []byte
}

// ChainedApproval is the approval a stored row holds, provided the chain
// vouches for it: an event records exactly this row (its payload, which
// commits to the body's sha256, rebuilt from the row), the event's hash
// links its payload, the body matches its sha256 and the columns agree
// with the body. A row inserted behind the chain, or a body edited after,
// is refused with a *audit.CoverageError whose reason is
// audit.ErrApprovalNotOnChain; the gate honours neither. (A signature is
// still needed: the chain's hashes are unkeyed. See audit.OperatorKeys.)
func ChainedApproval(id string, row *ApprovalRow, ev ChainEntry) (*audit.Approval, error) {
	fail := func(format string, args ...any) error {
		return &audit.CoverageError{ApprovalID: id, Reason: audit.ErrApprovalNotOnChain,
			Detail: fmt.Sprintf(format, args...) + "; the log was written behind its chain: run `ewp-audit verify`"}
	}
	switch {
	case !ev.Found:
		return nil, fail("approvals row %d is recorded by no chain event (inserted behind the chain)", row.Seq)
	case PayloadDiff(ev.Payload, row.Payload()) != "":
		return nil, fail("approvals row %d differs from what its chain event recorded: %s", row.Seq, PayloadDiff(ev.Payload, row.Payload()))
	case !bytes.Equal(ev.Hash, Hash(ev.Prev, []byte(ev.Payload))):
		return nil, fail("the chain event recording approvals row %d does not hash to its own hash", row.Seq)
	}
	if sum := sha256.Sum256(row.Body); !bytes.Equal(sum[:], row.BodySum) {
		return nil, fail("the body of approvals row %d does not match its body_sha256: it was edited", row.Seq)
	}
	a, err := DecodeApproval(row.Body)
	if err != nil {
		return nil, fail("%v", err)
	}
	derived := ApprovalColumns(a, row.Body)
	derived.Seq = row.Seq
	if diff := PayloadDiff(string(derived.Payload()), row.Payload()); diff != "" {
		return nil, fail("the columns of approvals row %d disagree with its body: %s", row.Seq, diff)
	}
	return a, nil
}

// ErrBrokenLog is wrapped by the error of a store that refuses to open or
// to append because the log is visibly broken at its tail or its
// append-only triggers are gone: extending it would bury the break under
// new, validly linked entries, and an approval read from it could be one
// written behind the chain.
var ErrBrokenLog = errors.New("the decision log is broken")

// BrokenLog is the refusal to open or extend a broken log; what says
// what was found.
func BrokenLog(what string) error {
	return fmt.Errorf("%w (%s); nothing was written: run `ewp-audit verify` to see what changed, and restore the log from a copy that verifies before serving from it", ErrBrokenLog, what)
}

// CheckTail checks one event alone, the last of a chain, in constant
// time: its prev_hash is before (the previous event's hash), its hash
// links prev_hash and payload, and the row it records is what it
// recorded, body included. A writer calls it before appending; Verify
// walks them all.
func CheckTail(e *Event, before []byte) *Break {
	if !bytes.Equal(e.Prev, before) {
		return &Break{Seq: e.Seq, Table: e.Table, RowSeq: e.RowSeq, What: fmt.Sprintf("prev_hash does not match the hash of event %d", e.Seq-1)}
	}
	w := NewWalker(&VerifyReport{Events: e.Seq - 1}, nil)
	w.head, w.tail = before, true
	return w.Event(e)
}

// UsePrefix is how the payload of every chain event recording a use of
// approvalID (in the form columns hold, AsJSON) begins: its first key.
// A store looks for such an event before it consumes an approval, so a
// use row deleted behind the chain cannot make a once approval usable
// again.
func UsePrefix(approvalID string) string {
	return string(make(payload, 0, 64).str("approval_id", approvalID)) + ","
}

// UseGone is the refusal to consume an approval whose use the chain
// records (event seq) but whose use row is gone.
func UseGone(approvalID string, seq int64) error {
	return &audit.CoverageError{ApprovalID: approvalID, Reason: audit.ErrApprovalNotOnChain,
		Detail: fmt.Sprintf("chain event %d records a use of it, but its approval_uses row is gone (deleted behind the chain); run `ewp-audit verify`", seq)}
}
