// Package sources wires the operator console to the server's stores in one
// call, whichever store --db names: the evidence ledger (SQLite or
// PostgreSQL, as store.Open returns it), the concept graph read from it,
// and the decision log with its store extras (newest-first feed, approval
// trail, chain walk) when it is one of the stores.
package sources

import (
	"errors"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/auditsource"
	"github.com/ewp-go/ewp/console/ledgersource"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/store"
)

// Sources is what the console reads and writes of the server's stores.
type Sources struct {
	Evidence console.EvidenceSource
	Graph    console.GraphFunc
	// Log is the decision log given to For (nil: none); Extras are its
	// store functions, empty for a log that is not a store (--demo's).
	Log    audit.Log
	Extras auditsource.Extras
}

// For adapts the ledger l and the decision log log (nil for none). It fails
// only for a ledger the console cannot follow (see ledgersource.ForStore).
func For(l store.Ledger, log audit.Log) (Sources, error) {
	if l == nil {
		return Sources{}, errors.New("console sources: no ledger; the console shows a ledger's evidence and needs one (--db)")
	}
	src, err := ledgersource.ForStore(l)
	if err != nil {
		return Sources{}, err
	}
	s := Sources{Evidence: src, Graph: graphstore.New(l, nil).Graph, Log: log}
	if log != nil {
		s.Extras = auditsource.For(log)
	}
	return s, nil
}

// Apply sets cfg's Evidence, Graph, Log, LogVerify, ListNewest and
// Presented; the caller sets the rest (token, addresses, policies). A
// server that already keeps a concept-graph store may set cfg.Graph to
// its Graph afterwards, sharing its cache.
func (s Sources) Apply(cfg *console.Config) {
	cfg.Evidence, cfg.Graph = s.Evidence, s.Graph
	if s.Log != nil {
		cfg.Log = s.Log
	}
	s.Extras.Apply(cfg)
}
