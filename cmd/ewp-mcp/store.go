package main

import (
	"io"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
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
	return ledgerStore{ledgerstore.New(l)}, l, nil
}

// ledgerStore is the ledger's mcp.Store, which also holds the concept
// graph (see guard.go).
type ledgerStore struct{ ledgerstore.Store }
