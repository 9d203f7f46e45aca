package main

import (
	"io"

	"github.com/ewp-go/ewp/ledger/sqlite"
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
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: !writable})
	if err != nil {
		return nil, nil, err
	}
	return ledgerStore{Store: ledgerstore.New(l), l: l, primary: l}, l, nil
}

// ledgerStore is the ledger's mcp.Store, which also holds the concept
// graph (see guard.go): the SQLite ledger or the PostgreSQL one.
type ledgerStore struct {
	ledgerstore.Store
	l store.Ledger
	// primary is the ledger writes go to, which the operator console
	// reads: with --standby, l is the standby, and an operator deciding
	// on the evidence must not see it trail the primary.
	primary store.Ledger
}

// consoleLedger is the ledger the operator console shows.
func (s ledgerStore) consoleLedger() store.Ledger { return s.primary }
