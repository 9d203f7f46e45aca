package main

import (
	"context"
	"errors"
	"io"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// openStore opens the evidence ledger at path as an mcp.Store.
//
// writable is true only when this process may write: stdio with
// --allow-ingest, or HTTP with an ingest token. Otherwise the ledger is
// opened read-only (so even a bug in the server cannot write), and a
// missing file is refused ("ledger not found"), never created.
func openStore(path string, writable bool) (mcp.Store, io.Closer, error) {
	l, err := ledger.Open(path, ledger.Options{ReadOnly: !writable})
	if err != nil {
		return nil, nil, err
	}
	return ledgerStore{l}, l, nil
}

// ledgerStore adapts *ledger.Ledger to the server's Store interface: the
// only translation is "no such snapshot" into mcp.ErrNotFound.
type ledgerStore struct{ l *ledger.Ledger }

func notFound(err error) error {
	var e *warrant.Error
	if errors.As(err, &e) && e.Code == warrant.CodeMissingView {
		return mcp.ErrNotFound
	}
	return err
}

func (s ledgerStore) Latest(ctx context.Context, prop string) (*warrant.View, error) {
	v, err := s.l.Latest(ctx, prop)
	return v, notFound(err)
}

func (s ledgerStore) Get(ctx context.Context, prop, viewID string) (*warrant.View, error) {
	v, err := s.l.Get(ctx, prop, viewID)
	return v, notFound(err)
}

func (s ledgerStore) List(ctx context.Context, query string, limit int) ([]mcp.PropositionSummary, error) {
	rows, err := s.l.List(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]mcp.PropositionSummary, len(rows))
	for i, r := range rows {
		out[i] = mcp.PropositionSummary{PropositionID: r.PropositionID, LatestViewID: r.LatestViewID, Texts: r.Texts}
	}
	return out, nil
}

func (s ledgerStore) Put(ctx context.Context, v *warrant.View) (bool, error) {
	res, err := s.l.Put(ctx, []*warrant.View{v})
	if err != nil {
		var be *ledger.BatchError
		if errors.As(err, &be) {
			return false, be.Unwrap()
		}
		return false, err
	}
	return res.Stored == 1, nil
}

func (s ledgerStore) AppendEvidence(ctx context.Context, prop string, in mcp.EvidenceInput) (*warrant.View, error) {
	recs := snapshot.Records{Evidence: []warrant.Evidence{in.Evidence}}
	if in.Assertion != nil {
		recs.Assertions = []warrant.Assertion{*in.Assertion}
	}
	res, err := s.l.Append(ctx, prop, recs)
	return res.View, notFound(err)
}

func (s ledgerStore) AppendCheck(ctx context.Context, prop string, in mcp.CheckInput) (*warrant.View, error) {
	res, err := s.l.AppendCheck(ctx, prop, in.Check)
	return res.View, notFound(err)
}
