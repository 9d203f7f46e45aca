package graphstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/ledger"
)

// Ledger is what the store needs of a ledger.Ledger.
type Ledger interface {
	CurrentPrimitives(ctx context.Context) ([]ledger.PrimitiveRow, error)
	GraphVersion(ctx context.Context) (int64, error)
	PrimitivesSince(ctx context.Context, seq int64) ([]ledger.PrimitiveRow, error)
	AppendPrimitives(ctx context.Context, validate func(current []ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error)) error
}

// Store is the concept graph of one ledger. It is safe for concurrent use.
type Store struct {
	l   Ledger
	now func() time.Time

	mu      sync.Mutex
	graph   *grounding.Graph // nil until the first read
	version int64            // the ledger graph version graph was read at
}

// New returns a store over l. now stamps the provenance of what it writes
// (time.Now when nil).
func New(l Ledger, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{l: l, now: now}
}

// Graph returns the current graph and the ledger graph version it was read
// at. Between changes it costs one indexed version query; after a change
// only the new revisions are read and applied to the cached graph. The
// graph is immutable and safe to share.
func (s *Store) Graph(ctx context.Context) (*grounding.Graph, int64, error) {
	v, err := s.l.GraphVersion(ctx)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.graph == nil:
		err = s.load(ctx)
	case v > s.version: // versions only grow: otherwise the cache is at least this new
		err = s.catchUp(ctx)
	}
	if err != nil {
		return nil, 0, err
	}
	return s.graph, s.version, nil
}

// load reads the whole current graph. Its version is the newest row's, not
// the v the caller read a moment earlier: a writer may have committed in
// between.
func (s *Store) load(ctx context.Context) error {
	rows, err := s.l.CurrentPrimitives(ctx)
	if err != nil {
		return err
	}
	g, err := Decode(rows)
	if err != nil {
		return err
	}
	s.graph, s.version = g, 0
	for _, r := range rows {
		s.version = max(s.version, r.Seq)
	}
	return nil
}

// catchUp applies the revisions written since the cached version.
func (s *Store) catchUp(ctx context.Context) error {
	rows, err := s.l.PrimitivesSince(ctx, s.version)
	if err != nil || len(rows) == 0 {
		return err
	}
	g, err := apply(s.graph, rows)
	if err != nil {
		return err
	}
	s.graph, s.version = g, rows[len(rows)-1].Seq
	return nil
}

// current is the graph the live rows of a write transaction make: the
// cached graph plus the rows newer than it when there is a cache (the rows
// at or below its version are exactly the ones it holds), else all rows.
func (s *Store) current(rows []ledger.PrimitiveRow) (*grounding.Graph, error) {
	s.mu.Lock()
	base, v := s.graph, s.version
	s.mu.Unlock()
	if base == nil {
		return Decode(rows)
	}
	var newer []ledger.PrimitiveRow
	for _, r := range rows {
		if r.Seq > v {
			newer = append(newer, r)
		}
	}
	if len(newer) == 0 && base.Len() == len(rows) {
		return base, nil
	}
	g, err := apply(base, newer)
	if err != nil || g.Len() != len(rows) {
		return Decode(rows) // the rows do not extend the cache: trust only them
	}
	return g, nil
}

// Decode rebuilds a graph from ledger rows (in ledger order).
func Decode(rows []ledger.PrimitiveRow) (*grounding.Graph, error) {
	return apply(&grounding.Graph{}, rows)
}

// apply decodes rows and applies them to g, in order. A row whose id or
// folded name disagrees with its body is refused: the ledger indexes rows
// by those columns, so a disagreement means the rows were not written by
// this package and the graph cannot be trusted.
func apply(g *grounding.Graph, rows []ledger.PrimitiveRow) (*grounding.Graph, error) {
	prims := make([]grounding.Primitive, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r.Body, &prims[i]); err != nil {
			return nil, fmt.Errorf("stored primitive %s does not decode: %w (run ewp-ingest verify)", r.ID, err)
		}
		if prims[i].ID != r.ID || grounding.Fold(prims[i].Name) != r.NameFold {
			return nil, fmt.Errorf("stored primitive %s: row is keyed (%s, %q) but its body is (%s, %q) (run ewp-ingest verify)",
				r.ID, r.ID, r.NameFold, prims[i].ID, grounding.Fold(prims[i].Name))
		}
	}
	ng, err := g.Apply(prims)
	if err != nil {
		return nil, fmt.Errorf("the stored concept graph is not valid: %w", err)
	}
	return ng, nil
}

// Encode turns revisions into ledger rows, keyed by id and folded name.
func Encode(revs []grounding.Primitive) ([]ledger.PrimitiveRow, error) {
	rows := make([]ledger.PrimitiveRow, len(revs))
	for i, p := range revs {
		body, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode primitive %q: %w", p.Name, err)
		}
		rows[i] = ledger.PrimitiveRow{ID: p.ID, NameFold: grounding.Fold(p.Name), Body: body}
	}
	return rows, nil
}
