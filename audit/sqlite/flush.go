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
	inOrder []bool // per kept op of pend: its id is in order
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
// An in-order id is greater than every id recorded in order, and every
// out-of-order id is smaller than some earlier in-order one, so only an
// out-of-order id needs looking up.
func (t *wtx) refuseTaken(ops []op, errs []error) error {
	keep, inOrder := t.keep[:0], t.inOrder[:0]
	var seen map[string]bool
	maxID, lastKept := t.maxID, ""
	for _, i := range t.pend {
		r := &ops[i].rec.Row
		in := r.DecisionID > maxID
		why := takenNone
		switch {
		case len(keep) > 0 && r.DecisionID == lastKept:
			why = takenID // its twin in the run, adjacent after the sort
		case !in:
			found, err := t.idTaken(r.DecisionID)
			if err != nil {
				return auditchain.InDoubt(err)
			}
			if found {
				why = takenID
			}
		}
		if why == takenNone && r.IdemKey.Valid {
			if seen == nil {
				seen = map[string]bool{}
			}
			var err error
			if why, err = t.keyTaken(r, seen); err != nil {
				return auditchain.InDoubt(err)
			}
		}
		switch why {
		case takenID:
			errs[i] = fmt.Errorf("decision %s is already recorded; every call gets a new decision_id", r.DecisionID)
			continue
		case takenKey:
			errs[i] = fmt.Errorf("%w: credential %q already recorded a decision under idempotency_key %q; fetch it with ByIdempotencyKey",
				audit.ErrDuplicateKey, r.Credential, r.IdemKey.String)
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

// What a decision's taken: nothing, its id or its idempotency key.
const (
	takenNone = iota
	takenID
	takenKey
)

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
// or by one seen earlier in the run.
func (t *wtx) keyTaken(r *decisionRow, seen map[string]bool) (int, error) {
	k := r.Credential + "\x00" + r.IdemKey.String
	if seen[k] {
		return takenKey, nil
	}
	var n int
	err := t.tx.QueryRow(`SELECT count(*) FROM decisions WHERE credential = ? AND idem_key = ?`, r.Credential, r.IdemKey.String).Scan(&n)
	if err != nil || n > 0 {
		return takenKey, err
	}
	seen[k] = true
	return takenNone, nil
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
