package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/gate"
)

// Benchmarks of check_grounding over a real ledger file. "eval" is the
// evaluation part of the MCP round trip: the tool's handler after argument
// decoding (a graph-version query to the ledger, the cached graph, the
// check). "server" is the server's whole share of a call: a JSON-RPC
// message in, dispatch, the handler and the encoded reply out.
// "roundtrip" adds mcp-go's in-process client on the other side. Targets (eval): < 1 ms on the 20-primitive filesystem graph,
// < 20 ms on 10,000 primitives.
//
//	go test ./mcp -run '^$' -bench CheckGrounding -benchmem

func BenchmarkCheckGroundingFilesystem(b *testing.B) {
	benchCheckGrounding(b, sharedFile(b, "vre-pack/filesystem.json"), []string{"copy", "file", "directory"})
}

func BenchmarkCheckGrounding10k(b *testing.B) {
	benchCheckGrounding(b, generatedGraph(100, 100), []string{"c7_40", "c7_41", "c7_20"})
}

func benchCheckGrounding(b *testing.B, doc []byte, concepts []string) {
	srv := guardServer(b, newGuardLedger(b, doc), nil)
	raw, _ := json.Marshal(concepts)
	a := args{"concepts": raw}
	ctx := context.Background()
	out, err := srv.checkGrounding(ctx, a)
	if err != nil {
		b.Fatal(err)
	}
	r := out.(gate.Grounded)
	if !r.Grounded {
		b.Fatalf("benchmark query is not grounded: %v", r.Gaps)
	}
	b.Logf("%d concepts in the trace, %d pathway steps", len(r.Trace.Result.Primitives), len(r.Trace.Result.Pathway))
	b.Run("eval", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := srv.checkGrounding(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("server", func(b *testing.B) {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_grounding","arguments":{"concepts":` + string(raw) + `}}}`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(srv.MCPServer().HandleMessage(ctx, msg)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("roundtrip", func(b *testing.B) {
		c, err := clientInProcess(srv)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "check_grounding"
		req.Params.Arguments = map[string]any{"concepts": concepts}
		b.ReportAllocs()
		for b.Loop() {
			if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	})
}

// generatedGraph is a graph document of domains×size primitives, each
// grounded D0–D3. Within a domain concept j REQUIRES concept (j-1)/2 (a
// binary tree, so closures stay logarithmic as in an authored taxonomy),
// APPLIES_TO concept j+1, and every tenth concept DEPENDS_ON the first
// concept of domain d/2, which ties the domains into one graph.
func generatedGraph(domains, size int) []byte {
	type rel struct {
		Type   string `json:"type"`
		Target string `json:"target"`
		Depth  int    `json:"target_depth"`
	}
	type depth struct {
		Level      int            `json:"level"`
		Properties map[string]any `json:"properties,omitempty"`
		Relata     []rel          `json:"relata,omitempty"`
	}
	type prim struct {
		Name   string  `json:"name"`
		Depths []depth `json:"depths"`
	}
	name := func(d, j int) string { return fmt.Sprintf("c%d_%d", d, j) }
	var prims []prim
	for d := range domains {
		for j := range size {
			p := prim{Name: name(d, j), Depths: []depth{{Level: 0}}}
			for l := 1; l <= 3; l++ {
				p.Depths = append(p.Depths, depth{Level: l, Properties: map[string]any{"description": fmt.Sprintf("%s at D%d", p.Name, l)}})
			}
			if j > 0 {
				p.Depths[1].Relata = append(p.Depths[1].Relata, rel{"REQUIRES", name(d, (j-1)/2), 1})
			}
			if j%10 == 0 && d > 0 {
				p.Depths[2].Relata = append(p.Depths[2].Relata, rel{"DEPENDS_ON", name(d/2, 0), 2})
			}
			if j+1 < size {
				p.Depths[3].Relata = append(p.Depths[3].Relata, rel{"APPLIES_TO", name(d, j+1), 2})
			}
			prims = append(prims, p)
		}
	}
	b, err := json.Marshal(map[string]any{"graph": "generated", "primitives": prims})
	if err != nil {
		panic(err)
	}
	return b
}
