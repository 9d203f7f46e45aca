package main

import (
	"errors"
	"io"

	"github.com/ewp-go/ewp/mcp"
)

// openStore opens the evidence ledger at path as an mcp.Store.
//
// writable is true only when this process may write: stdio with
// --allow-ingest, or HTTP with an ingest token. Otherwise open the ledger
// read-only (so even a bug in the server cannot write), and refuse a
// missing file ("ledger not found") instead of creating an empty ledger.
// The Closer is closed once serving has stopped.
//
// TODO(lead): this is the one piece left for the ledger: open it here and
// return a thin adapter to mcp.Store (see mcp/store.go for the contract).
func openStore(path string, writable bool) (mcp.Store, io.Closer, error) {
	_, _ = path, writable
	return nil, nil, errors.New("the ledger is not wired into ewp-mcp yet (cmd/ewp-mcp/store.go: openStore)")
}
