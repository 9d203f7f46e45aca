package main

import (
	"io"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/store"
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
	return ledgerStore{Store: ledgerstore.New(l), l: l}, l, nil
}

// ledgerStore is the ledger's mcp.Store, which also holds the concept
// graph (see guard.go): the SQLite ledger or the PostgreSQL one.
type ledgerStore struct {
	ledgerstore.Store
	l store.Ledger
}

// Ledger is the SQLite ledger served, which the operator console reads;
// nil on PostgreSQL.
func (s ledgerStore) Ledger() *ledger.Ledger {
	l, _ := s.l.(*ledger.Ledger)
	return l
}
