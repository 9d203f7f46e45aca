package mcp

import (
	"context"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkWarrantNowInProcess measures one warrant_now round trip through
// mcp-go's in-process client: JSON-RPC encoding, dispatch, argument
// checks, a store read and evaluation.
func BenchmarkWarrantNowInProcess(b *testing.B) {
	srv, _ := newTestServer(b)
	c, err := clientInProcess(srv)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "warrant_now"
	req.Params.Arguments = map[string]any{"proposition_id": "P-verified", "evaluated_at": testT}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
}
