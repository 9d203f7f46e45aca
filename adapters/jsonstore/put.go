package jsonstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// The write results are the store-neutral ones of package snapshot.
type (
	PutResult  = snapshot.PutResult
	Outcome    = snapshot.Outcome
	BatchError = snapshot.BatchError
)

// Put stores views as one all-or-nothing batch, with the ledger's rules:
// each view is checked against the §9 rules as of the views before it
// (earlier views of the same batch included); an identical re-put is a
// no-op; a different snapshot under an existing (proposition_id, view_id)
// or a record id reused with other content is refused with
// warrant.CodeImmutableRecord, and then nothing of the batch is written.
//
// As with the ledger, attesting trusted origins (snapshot.RequireAttestation)
// is the caller's duty. Unlike the ledger, Put also refuses a view that the
// kernel would refuse (a hand-built warrant.View with, say, an unknown
// polarity): a file store has no schema to stop it, and a stored snapshot
// must read back.
func (s *Store) Put(ctx context.Context, views []*warrant.View) (PutResult, error) {
	res := PutResult{Views: make([]Outcome, 0, len(views))}
	err := s.write(ctx, func() error {
		b := s.newBatch()
		for i, v := range views {
			if err := ctx.Err(); err != nil {
				return err
			}
			out, err := b.store(v)
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			out.Index = i
			res.Add(out)
		}
		return b.commit()
	})
	if err != nil {
		return PutResult{}, err
	}
	return res, nil
}

// batch is one write under the exclusive lock: the propositions it has
// read and the files it will write.
type batch struct {
	s      *Store
	props  map[string]*propState
	order  []*propState // first use order, for deterministic staging
	bodies []pendingFile
}

func (s *Store) newBatch() *batch {
	return &batch{s: s, props: map[string]*propState{}}
}

func (b *batch) prop(id string) (*propState, error) {
	if st, ok := b.props[id]; ok {
		return st, nil
	}
	st, err := loadProp(b.s.dir, id)
	if err != nil {
		return nil, err
	}
	b.props[id] = st
	b.order = append(b.order, st)
	return st, nil
}

// store decides one view and, when it is new, adds it to the batch.
func (b *batch) store(v *warrant.View) (Outcome, error) {
	if v == nil {
		return Outcome{}, errors.New("nil view")
	}
	out := Outcome{PropositionID: v.PropositionID, ViewID: v.ViewID}
	body, err := storable(v)
	if err != nil {
		return out, err
	}
	st, err := b.prop(v.PropositionID)
	if err != nil {
		return out, err
	}
	if i, ok := st.views[v.ViewID]; ok {
		prev := st.snaps[i]
		sum, ok := snapshot.ParseSum(prev.Sum)
		if !ok {
			return out, storeErr("read index", fmt.Errorf("%s: snapshot %d has a malformed sum", st.name, prev.Seq))
		}
		if err := snapshot.CheckSnapshot(sum, v); err != nil {
			return out, err
		}
		out.Seq = prev.Seq
		return out, nil
	}
	fps, err := snapshot.Check(st.records, v)
	if err != nil {
		return out, err
	}
	out.Seq, out.Stored = b.add(st, v, body, fps), true
	return out, nil
}

// add records a new snapshot in the proposition's state and queues its
// body. body is warrant.Encode(v), so its sha256 is snapshot.StoredSum(v).
func (b *batch) add(st *propState, v *warrant.View, body []byte, fps []snapshot.Fingerprint) int64 {
	seq := int64(len(st.snaps)) + 1
	sum := sha256.Sum256(body)
	e := snapEntry{Seq: seq, ViewID: text(v.ViewID), File: snapFile(seq, v.ViewID), Sum: hex.EncodeToString(sum[:])}
	st.views[v.ViewID] = len(st.snaps)
	st.snaps = append(st.snaps, e)
	st.records.Add(v.ViewID, fps)
	st.texts = assertionTexts(v)
	st.dirty = true
	b.bodies = append(b.bodies, pendingFile{prop: st, name: e.File, data: body})
	return seq
}

// snapFile names a snapshot's file: its sequence number first, so a
// directory listing reads in history order.
func snapFile(seq int64, viewID string) string {
	return fmt.Sprintf("%08d-%s.json", seq, escape(viewID))
}

// storable returns the stored form of v after making sure the kernel
// reads it back as the same snapshot.
func storable(v *warrant.View) ([]byte, error) {
	if err := snapshot.CheckSurrogates(v); err != nil {
		return nil, err
	}
	body := warrant.Encode(v)
	back, err := warrant.DecodeView(body)
	if err != nil {
		return nil, err
	}
	if v.ViewID == "" || !bytes.Equal(warrant.Encode(back), body) {
		return nil, &warrant.Error{Code: warrant.CodeInvalidView, Field: "view_id",
			Rule: "the view does not read back as itself (a hand-built warrant.View without a view id?); decode views with warrant.DecodeView before storing them"}
	}
	return body, nil
}
