package sqlite

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// flushState is what a batch keeps for writing its decisions together.
type flushState struct {
	pend   []int // ops waiting to be flushed, by index
	keep   []int
	args   []any
	bodies []byte
	hashes [][]byte
}

// errIDTaken fails a batch whose INSERT skipped a decision: its id was
// already recorded. The writer then runs the batch again, checking each
// id first (see writer.runBatch).
var errIDTaken = errors.New("a decision_id in the batch is already recorded")

// flush writes the decisions waiting in t.pend: their rows, a few at a
// time, and their bodies as one decision_bodies row, their chain events
// numbered on from the head. A decision whose idempotency key (or, when
// t.checkIDs, whose id) is already taken is refused alone (errs), as a
// single INSERT would be; the others are written. Only a failure of the
// store, or errIDTaken, is returned, and it fails the batch.
//
// The INSERTs are OR IGNORE so that SQLite needs no statement journal
// (a multi-row INSERT that may abort half-way copies every page it
// touches first, which cost as much as the insert); a row skipped for a
// taken id shows in the count of rows written.
func (t *wtx) flush(ops []op, errs []error) error {
	if len(t.pend) == 0 {
		return nil
	}
	defer func() { t.pend = t.pend[:0] }()
	if err := t.refuseTaken(ops, errs, t.checkIDs); err != nil {
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

// refuseTaken drops from t.pend the decisions whose idempotency key (or,
// with ids, whose decision_id) is taken, in the log or earlier in the
// run, setting their errs.
func (t *wtx) refuseTaken(ops []op, errs []error, ids bool) error {
	keep := t.keep[:0]
	var seen map[string]bool
	for _, i := range t.pend {
		r := &ops[i].rec.Row
		if !r.IdemKey.Valid && !ids {
			keep = append(keep, i)
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		why, err := t.taken(r, seen, ids)
		if err != nil {
			return err
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
		keep = append(keep, i)
	}
	t.keep, t.pend = t.pend[:0], keep
	return nil
}

// What a decision's taken: nothing, its id or its idempotency key.
const (
	takenNone = iota
	takenID
	takenKey
)

// taken says whether a decision's idempotency key (and, with ids, its
// decision_id) is taken, in the log or by one seen earlier in the run.
func (t *wtx) taken(r *decisionRow, seen map[string]bool, ids bool) (int, error) {
	if ids {
		k := "id\x00" + r.DecisionID
		var n int
		if err := t.tx.QueryRow(`SELECT count(*) FROM decisions WHERE decision_id = ?`, r.DecisionID).Scan(&n); err != nil {
			return 0, err
		}
		if n > 0 || seen[k] {
			return takenID, nil
		}
		seen[k] = true
	}
	if !r.IdemKey.Valid {
		return takenNone, nil
	}
	k := "key\x00" + r.Credential + "\x00" + r.IdemKey.String
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

// insertDecisions writes the decisions of t.pend and moves the head past
// them; on failure the head is left where it was.
func (t *wtx) insertDecisions(ops []op) error {
	if len(t.pend) == 0 {
		return nil
	}
	seq, dseq, head := t.seq, t.dseq, t.head
	first := seq + 1
	t.hashes = t.hashes[:0]
	for _, i := range t.pend {
		r := ops[i].rec
		seq, dseq = seq+1, dseq+1
		t.buf = append(strconv.AppendInt(append(t.buf[:0], r.Pre...), dseq, 10), r.Post...)
		head = chainHash(head, t.buf)
		t.hashes = append(t.hashes, head)
	}
	for start, n := 0, 0; start < len(t.pend); start += n {
		size := min(bits.Len(uint(len(t.pend)-start)), insertSizes) - 1
		n = 1 << size
		args := t.args[:0]
		for k := start; k < start+n; k++ {
			r := &ops[t.pend[k]].rec.Row
			args = append(args, first+int64(k), r.DecisionID, r.TimeNS, r.Outcome,
				r.PropositionID, r.Credential, r.IdemKey, r.ApprovalID, t.hashes[k])
		}
		t.args = args
		res, err := t.exec(t.st.insDecisions[size], args...)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		if written, err := res.RowsAffected(); err != nil || written != int64(n) {
			return errIDTaken
		}
		// The rows take the next rowids (seq), as the chain numbers them:
		// an explicit seq would make SQLite journal the statement.
		if last, err := res.LastInsertId(); err != nil || last != t.dseq+int64(start+n) {
			return auditchain.InDoubt(fmt.Errorf("decision rows were numbered up to %d where the chain says %d (%v): run ewp-audit verify", last, t.dseq+int64(start+n), err))
		}
	}
	if err := t.insertBodies(ops, first); err != nil {
		return err
	}
	clear(t.args)
	t.seq, t.dseq, t.head = seq, dseq, head
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
			if err := t.insertBodiesRow(first, start, k); err != nil {
				return err
			}
			start, t.bodies = k, t.bodies[:0]
		}
		t.bodies = appendBody(t.bodies, body)
	}
	return t.insertBodiesRow(first, start, len(t.pend))
}

// insertBodiesRow writes t.bodies, the bodies of t.pend[from:to].
func (t *wtx) insertBodiesRow(first int64, from, to int) error {
	_, err := t.exec(t.st.insBodies, first+int64(from), t.dseq+int64(from)+1, to-from, t.hashes[to-1], t.bodies)
	return auditchain.InDoubt(err)
}
