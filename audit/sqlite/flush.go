package sqlite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// flushState is what a batch keeps for writing its decisions together.
type flushState struct {
	pend    []int // ops waiting to be flushed, by index
	keep    []int
	inOrder []bool          // per kept op of pend: its id is in order
	keys    map[string]bool // the idempotency keys kept in the run, credential NUL key
	bodies  []byte
	hashes  [][]byte
}

// flush writes the decisions waiting in t.pend, sorted by decision_id
// (the chain order inside a run is the writer's to choose, and sorted
// time-ordered ids are nearly all in order, so nearly none needs a row):
// the rows of the special ones, one by one, and all their bodies as
// decision_bodies rows, their chain events numbered on from the head. A
// decision whose id or idempotency key is already taken is refused alone
// (errs); the others are written. Only a failure of the store is
// returned, and it fails the batch.
func (t *wtx) flush(ops []op, errs []error) error {
	if len(t.pend) == 0 {
		return nil
	}
	defer func() { t.pend = t.pend[:0] }()
	slices.SortStableFunc(t.pend, func(a, b int) int {
		return strings.Compare(ops[a].rec.Row.DecisionID, ops[b].rec.Row.DecisionID)
	})
	if err := t.refuseTaken(ops, errs); err != nil {
		return err
	}
	if err := t.insertDecisions(ops); err != nil {
		return err
	}
	for _, i := range t.pend {
		errs[i] = nil
	}
	return nil
}

// refuseTaken drops from t.pend (sorted by id) the decisions whose
// decision_id or idempotency key is taken, in the log or earlier in the
// run, setting their errs, and marks which of those kept are in order.
func (t *wtx) refuseTaken(ops []op, errs []error) error {
	keep, inOrder := t.keep[:0], t.inOrder[:0]
	maxID, lastKept := t.maxID, ""
	clear(t.keys)
	for _, i := range t.pend {
		r := &ops[i].rec.Row
		in := r.DecisionID > maxID
		twin := len(keep) > 0 && r.DecisionID == lastKept // adjacent after the sort
		refusal, err := t.refusal(r, in, twin)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		if refusal != nil {
			errs[i] = refusal
			continue
		}
		keep, inOrder, lastKept = append(keep, i), append(inOrder, in), r.DecisionID
		if in {
			maxID = r.DecisionID
		}
	}
	t.keep, t.pend, t.inOrder = t.pend[:0], keep, inOrder
	return nil
}

// refusal is why decision r may not be recorded, nil when it may: its id
// is its twin's in the run or already in the log, or its idempotency key
// is taken. An in-order id is greater than every id recorded in order,
// and every out-of-order id is smaller than some earlier in-order one, so
// only an out-of-order id needs looking up.
func (t *wtx) refusal(r *decisionRow, inOrder, twin bool) (refusal, err error) {
	idTaken := twin
	if !twin && !inOrder {
		if idTaken, err = t.idTaken(r.DecisionID); err != nil {
			return nil, err
		}
	}
	if idTaken {
		return fmt.Errorf("decision %s is already recorded; every call gets a new decision_id", r.DecisionID), nil
	}
	if !r.IdemKey.Valid {
		return nil, nil
	}
	if keyTaken, err := t.keyTaken(r); err != nil || !keyTaken {
		return nil, err
	}
	return fmt.Errorf("%w: credential %q already recorded a decision under idempotency_key %q; fetch it with ByIdempotencyKey",
		audit.ErrDuplicateKey, r.Credential, r.IdemKey.String), nil
}

// idTaken looks an out-of-order decision_id up in the log (this
// transaction's earlier runs included).
func (t *wtx) idTaken(id string) (bool, error) {
	_, err := findDecision(t.ctx, t.tx, id)
	if err == errNoDecision {
		return false, nil
	}
	return err == nil, err
}

// keyTaken says whether a decision's idempotency key is taken, in the log
// or by one kept earlier in the run (t.keys), and else takes it.
func (t *wtx) keyTaken(r *decisionRow) (bool, error) {
	k := r.Credential + "\x00" + r.IdemKey.String
	if t.keys[k] {
		return true, nil
	}
	var n int
	err := t.tx.QueryRow(`SELECT count(*) FROM decisions WHERE credential = ? AND idem_key = ?`, r.Credential, r.IdemKey.String).Scan(&n)
	if err != nil || n > 0 {
		return true, err
	}
	if t.keys == nil {
		t.keys = map[string]bool{}
	}
	t.keys[k] = true
	return false, nil
}

// special reports a decision that needs a decisions row: its id is out of
// order (its id alone cannot find it), or a lookup by something else
// selects it (its idempotency key, the pending inbox, an approval).
func special(r *decisionRow, inOrder bool) bool {
	return !inOrder || r.IdemKey.Valid || r.Outcome == string(audit.OutcomeRequireConfirmation) || r.ApprovalID != ""
}

// insertDecisions writes the decisions of t.pend and moves the head past
// them; on failure the head is left where it was.
func (t *wtx) insertDecisions(ops []op) error {
	if len(t.pend) == 0 {
		return nil
	}
	seq, dseq, head, maxID := t.seq, t.dseq, t.head, t.maxID
	first := seq + 1
	t.hashes = t.hashes[:0]
	for k, i := range t.pend {
		r := ops[i].rec
		seq, dseq = seq+1, dseq+1
		t.buf = append(strconv.AppendInt(append(t.buf[:0], r.Pre...), dseq, 10), r.Post...)
		head = chainHash(head, t.buf)
		t.hashes = append(t.hashes, head)
		if t.inOrder[k] {
			maxID = r.Row.DecisionID
		}
		if !special(&r.Row, t.inOrder[k]) {
			continue
		}
		row := &r.Row
		if _, err := t.exec(t.st.insDecision, dseq, seq, row.DecisionID, row.TimeNS, row.Outcome,
			row.PropositionID, row.Credential, row.IdemKey, row.ApprovalID, head); err != nil {
			return auditchain.InDoubt(err)
		}
	}
	if err := t.insertBodies(ops, first); err != nil {
		return err
	}
	t.seq, t.dseq, t.head, t.maxID = seq, dseq, head, maxID
	return nil
}

// maxBodiesRow caps a decision_bodies row's size: a lookup of one
// decision reads its whole row, so a row stays small beside the log
// however large the batch (a body larger than the cap has a row of its
// own).
const maxBodiesRow = 256 << 10

// insertBodies writes the bodies of t.pend, whose events begin at first,
// as decision_bodies rows of at most maxBodiesRow bytes.
func (t *wtx) insertBodies(ops []op, first int64) error {
	start := 0
	t.bodies = t.bodies[:0]
	for k, i := range t.pend {
		body := ops[i].rec.Row.Body
		if k > start && len(t.bodies)+len(body)+1 > maxBodiesRow {
			if err := t.insertBodiesRow(ops, first, start, k); err != nil {
				return err
			}
			start, t.bodies = k, t.bodies[:0]
		}
		t.bodies = appendBody(t.bodies, body)
	}
	return t.insertBodiesRow(ops, first, start, len(t.pend))
}

// insertBodiesRow writes t.bodies, the bodies of t.pend[from:to], with
// the least and greatest of their in-order ids.
func (t *wtx) insertBodiesRow(ops []op, first int64, from, to int) error {
	var ids idRange
	for k := from; k < to; k++ {
		if t.inOrder[k] {
			ids.add(ops[t.pend[k]].rec.Row.DecisionID)
		}
	}
	_, err := t.exec(t.st.insBodies, first+int64(from), t.dseq+int64(from)+1, to-from, t.hashes[to-1],
		ids.first, ids.last, t.bodies)
	return auditchain.InDoubt(err)
}

// idRange is the first_id and last_id of a decision_bodies row: its
// first and last in-order ids (they grow), NULL when it holds none.
type idRange struct{ first, last any }

func (r *idRange) add(id string) {
	if r.first == nil {
		r.first = id
	}
	r.last = id
}
