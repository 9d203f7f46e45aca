package mcp

import (
	"context"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// guardLedger is a real ledger file with graph documents loaded through
// ewp-ingest's code path (ingest.Loader with graphstore.LoadDocument).
type guardLedger struct {
	l     *sqlite.Ledger
	store *graphstore.Store
}

func newGuardLedger(t testing.TB, docs ...[]byte) *guardLedger {
	t.Helper()
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	gl := &guardLedger{l: l, store: graphstore.New(l, func() time.Time { return testNow })}
	for _, d := range docs {
		gl.ingest(t, d)
	}
	return gl
}

// ingest loads one graph document the way ewp-ingest does.
func (gl *guardLedger) ingest(t testing.TB, doc []byte) {
	t.Helper()
	ld := &ingest.Loader{L: gl.l, Opt: ingest.Options{Graph: graphstore.LoadDocument}}
	rep, err := ld.LoadFile(context.Background(), "graph.json", doc)
	if err != nil || !rep.Written || len(rep.Refused) > 0 {
		t.Fatalf("ingest: %v %+v", err, rep.Refused)
	}
}

// guardServer is a test server (seeded fake evidence store, fixed clock)
// with the guard over gl and the given policies (nil: none).
func guardServer(t testing.TB, gl *guardLedger, policies *edgepolicy.Set, opts ...Option) *Server {
	t.Helper()
	srv, _ := newTestServer(t, append([]Option{WithGuard(Guard{Graph: gl.store, Policies: policies})}, opts...)...)
	return srv
}

func demoPolicies(t testing.TB) *edgepolicy.Set {
	t.Helper()
	return loadPolicies(t, string(fixtures.DemoPolicies))
}

func loadPolicies(t testing.TB, src string) *edgepolicy.Set {
	t.Helper()
	set, err := edgepolicy.Load("test.cedar", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// demoServer serves the demo graph with the demo policies.
func demoServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return guardServer(t, newGuardLedger(t, fixtures.DemoGraph), demoPolicies(t), opts...)
}

// sharedFile reads a file of ../shared beside the repository root, or
// skips: the packs are read at run time, never copied into the repository.
func sharedFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(sharedtest.Path(t, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// guardAct is an action for the guard tests: low risk and reversible, so
// the warrant layer allows it on P-verified.
func guardAct(concepts []any, extra obj) obj {
	a := obj{"action_id": "act-g", "kind": "delete", "risk": "low", "reversible": true, "concepts": concepts}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

// rm is the tool call of the demo: delete one path.
func rm(path, cardinality string) obj {
	e := obj{"tool_name": "rm", "arguments": obj{"path": path}}
	if cardinality != "" {
		e["cardinality"] = cardinality
	}
	return e
}

// layer returns the named layer of a may_act result, or nil.
func layer(out obj, name string) obj {
	for _, l := range out["layers"].([]any) {
		if lo := l.(obj); lo["layer"] == name {
			return lo
		}
	}
	return nil
}

func reasons(l obj) []string {
	var out []string
	for _, r := range l["reasons"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

func demoGraphBytes() []byte { return fixtures.DemoGraph }

// fuzzGuard installs the guard (demo graph and policies in a fresh ledger)
// for the argument fuzz tests.
func fuzzGuard(t testing.TB) Option {
	return WithGuard(Guard{Graph: newGuardLedger(t, fixtures.DemoGraph).store, Policies: demoPolicies(t)})
}
