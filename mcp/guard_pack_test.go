package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ewp-go/ewp/grounding"
)

// TestPackThroughTheLedger runs every case of ../shared/vre-pack/cases.json
// end to end: the graph is ingested with ewp-ingest's code path into a real
// ledger file, the server reads it back through graphstore, an mcp-go
// client calls check_grounding (in-process and over HTTP), and the decoded
// result is compared with grounding.CompareCase as the pack's README says.
// The two named graphs get one ledger each; every inline graph a fresh one.
func TestPackThroughTheLedger(t *testing.T) {
	cases, err := grounding.DecodeCases(sharedFile(t, "vre-pack/cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 77 {
		t.Fatalf("cases.json has %d cases, want 77", len(cases))
	}
	for _, d := range []dialer{{"in-process", func(t *testing.T, srv *Server, _ bool) *client.Client { return dialInProcess(t, srv) }}, dialers[0]} {
		t.Run(d.name, func(t *testing.T) {
			named := map[string]*client.Client{}
			for _, g := range []string{"filesystem", "gaps"} {
				named[g] = d.dial(t, guardServer(t, newGuardLedger(t, sharedFile(t, "vre-pack/"+g+".json")), nil), false)
			}
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					cl := named[c.NamedGraph()]
					if cl == nil {
						cl = d.dial(t, guardServer(t, newGuardLedger(t, c.Graph), nil), false)
					}
					got := checkGrounding(t, cl, c.Query, c.MinDepth)
					for _, m := range grounding.CompareCase(c.Expect, got) {
						t.Error(m)
					}
				})
			}
		})
	}
}

// checkGrounding calls the tool and decodes its structured result.
func checkGrounding(t testing.TB, c *client.Client, concepts []string, minDepth *int) grounding.Result {
	t.Helper()
	arguments := obj{"concepts": concepts}
	if concepts == nil {
		arguments["concepts"] = []any{}
	}
	if minDepth != nil {
		arguments["min_depth"] = *minDepth
	}
	out := mustOK(t, call(t, c, "check_grounding", arguments))
	var r grounding.Result
	if err := json.Unmarshal(mustJSONText(t, out), &r); err != nil {
		t.Fatalf("check_grounding result does not decode: %v", err)
	}
	return r
}

// §7 #31 beyond the pack: a dormant D3 above a D1 chain never ships.
func TestDormantDepthIsTrimmedOverMCP(t *testing.T) {
	gl := newGuardLedger(t, []byte(`{"graph": "engine_31", "primitives": [{"name": "widget", "depths": [{"level": 0},
	  {"level": 1, "properties": {"d": "widget D1"}}, {"level": 3, "properties": {"d": "widget D3"}}]}]}`))
	r := checkGrounding(t, dialInProcess(t, guardServer(t, gl, nil)), []string{"widget"}, nil)
	var levels []grounding.DepthLevel
	for _, d := range r.Trace.Result.Primitives[0].Depths {
		levels = append(levels, d.Level)
	}
	if !r.Grounded || !slices.Equal(levels, []grounding.DepthLevel{0, 1}) {
		t.Fatalf("grounded %v, shipped levels %v; want true, [0 1]", r.Grounded, levels)
	}
}

// The same question on the same graph gives the same bytes: no random ids
// (an unknown concept's placeholder id is derived from its name) and no
// map-order effects.
func TestCheckGroundingIsDeterministic(t *testing.T) {
	fs := sharedFile(t, "vre-pack/filesystem.json")
	var first []byte
	for i := range 3 {
		c := dialInProcess(t, guardServer(t, newGuardLedger(t, fs), nil)) // a fresh ledger each time
		out := mustOK(t, call(t, c, "check_grounding", obj{"concepts": []any{"network", "copy", "file", "directory"}}))
		b := mustJSONText(t, out)
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, b)
		}
	}
}
