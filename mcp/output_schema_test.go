package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/warrant"
)

// The server does not check each result against its tool's output schema
// at run time (docs/decisions.md). The tests do instead: callCtx
// validates every structured result any test receives, over every
// transport, against the output schema the server published for the tool
// in its tools/list answer on that same connection. The fuzz tests, the
// guard pack and the test below all run through it.

// validated counts the results checked per client, so a test can make
// sure it checked what it meant to.
var validated sync.Map // *client.Client -> *atomic.Int64

func checkedBy(c *client.Client) int64 {
	n, _ := validated.LoadOrStore(c, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

// publishedSchemas are the compiled output schemas per client, from the
// raw tools/list result that client received.
var publishedSchemas sync.Map // *client.Client -> map[string]*jsonschema.Schema

// checkOutputSchema fails t unless structured (a tool result's
// structuredContent as received) satisfies tool's published output schema.
func checkOutputSchema(t testing.TB, c *client.Client, tool string, structured json.RawMessage) {
	t.Helper()
	sch, ok := outputSchemasOf(t, c)[tool]
	if !ok {
		t.Fatalf("%s: the server published no output schema for it", tool)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		t.Fatalf("%s: structuredContent is not JSON: %v", tool, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s: result does not match its published output schema: %v\n%s", tool, err, structured)
	}
	n, _ := validated.LoadOrStore(c, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// outputSchemasOf asks c's server for tools/list once and compiles each
// tool's outputSchema exactly as sent (not as mcp-go's client types would
// re-encode it), with the compiler defaults mcp-go's validator uses.
func outputSchemasOf(t testing.TB, c *client.Client) map[string]*jsonschema.Schema {
	t.Helper()
	if m, ok := publishedSchemas.Load(c); ok {
		return m.(map[string]*jsonschema.Schema)
	}
	resp, err := c.GetTransport().SendRequest(context.Background(), rawToolsList(t, c))
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/list: %v %+v", err, resp.Error)
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(resp.Result, &list); err != nil {
		t.Fatal(err)
	}
	m := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		m[tool.Name] = compileSchema(t, tool.Name, tool.OutputSchema)
	}
	publishedSchemas.Store(c, m)
	return m
}

// rawToolsList is a tools/list request as c's client would send it: under
// the 2026-07-28 revision its _meta and Mcp-* headers carry the protocol
// version, as SEP-2575 and SEP-2243 require.
func rawToolsList(t testing.TB, c *client.Client) transport.JSONRPCRequest {
	req := transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId("published-output-schemas"),
		Method: string(mcpgo.MethodToolsList)}
	pv := c.ProtocolVersion()
	if !mcpgo.IsModernProtocol(pv) {
		return req
	}
	params := obj{"_meta": obj{mcpgo.MetaKeyProtocolVersion: pv, mcpgo.MetaKeyClientCapabilities: obj{},
		mcpgo.MetaKeyClientInfo: mcpgo.Implementation{Name: "ewp-test", Version: "0"}}}
	req.Params = params
	req.Header = http.Header{}
	for k, v := range mcpgo.StandardHeaders(pv, mcpgo.MethodToolsList, mustJSONText(t, params)) {
		req.Header.Set(k, v)
	}
	return req
}

func compileSchema(t testing.TB, name string, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s output schema: %v", name, err)
	}
	comp := jsonschema.NewCompiler()
	url := "mem:///" + name + "/output.json"
	if err := comp.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile(url)
	if err != nil {
		t.Fatalf("%s output schema does not compile: %v", name, err)
	}
	return sch
}

// Every tool that evaluates evidence, on every view of the project's pack
// (always: it is in the repository), then of the reference pack and the
// public differential corpus (when ../shared is there), valid or not,
// inline and stored, over HTTP (the direct path) and in process (mcp-go's
// dispatch): each answer is a refusal or matches its published schema.
func TestOutputsMatchPublishedSchemas(t *testing.T) {
	t.Run("project pack", func(t *testing.T) {
		docs := packDocs(t, filepath.Join("..", "fixtures", "pack"))
		if len(docs) < 50 {
			t.Fatalf("only %d documents in ../fixtures/pack", len(docs))
		}
		checkOutputsMatchSchemas(t, docs)
	})
	t.Run("reference pack and corpus", func(t *testing.T) {
		docs := packDocs(t, sharedtest.Path(t, "ewp-pack"))
		sharedtest.EachCorpusCase(t, func(_ int, c sharedtest.CorpusCase) { docs = append(docs, c.Doc) })
		if len(docs) < 1000 {
			t.Fatalf("only %d documents; the reference pack or the corpus is incomplete", len(docs))
		}
		checkOutputsMatchSchemas(t, docs)
	})
}

// checkOutputsMatchSchemas stores the valid docs and calls every
// evaluating tool on each, inline and stored, over both dialers.
func checkOutputsMatchSchemas(t *testing.T, docs []json.RawMessage) {
	st := newFakeStore()
	stored, latest := storeValid(t, st, docs)
	srv := New(st, WithClock(func() time.Time { return testNow }), WithLogger(quietLogger()), fuzzGuard(t))
	for _, d := range []dialer{
		{"in-process", func(t *testing.T, srv *Server, _ bool) *client.Client { return dialInProcess(t, srv) }},
		{"http 2025-06-18 (the direct path)", func(t *testing.T, srv *Server, _ bool) *client.Client {
			return rawClient(t, srv, "http", client.WithProtocolVersion("2025-06-18"))
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			c := d.dial(t, srv, false)
			var validated int64
			for _, doc := range docs {
				var v any
				if json.Unmarshal(doc, &v) != nil {
					continue // mcp-go refuses the request itself (e.g. 1e400): no result to check
				}
				call(t, c, "warrant_now", obj{"view": json.RawMessage(doc), "evaluated_at": docTime(doc)})
			}
			for i, v := range stored {
				callStoredTools(t, c, v, latest[i])
			}
			if validated = checkedBy(c); validated < int64(len(stored))*3 {
				t.Fatalf("only %d results validated for %d documents, %d stored", validated, len(docs), len(stored))
			}
			t.Logf("%d results validated (%d documents, %d stored)", validated, len(docs), len(stored))
		})
	}
}

// callStoredTools calls every read tool that answers about a stored
// snapshot: named by view_id where a tool takes one, else the latest.
func callStoredTools(t *testing.T, c *client.Client, v *warrant.View, latest bool) {
	pid := v.PropositionID
	call(t, c, "warrant_now", obj{"proposition_id": pid, "view_id": v.ViewID, "evaluated_at": testT})
	call(t, c, "warrant_now", obj{"proposition_id": pid, "view_id": v.ViewID, "evaluated_at": "2026-01-01T00:00:00Z"})
	call(t, c, "evidence_view_get", obj{"proposition_id": pid, "view_id": v.ViewID})
	if !latest {
		return
	}
	call(t, c, "memory_context", obj{"proposition_id": pid})
	call(t, c, "list_propositions", obj{"query": pid, "limit": 500})
	for _, risk := range []string{"low", "high"} {
		call(t, c, "may_act", obj{"proposition_id": pid, "action": action(risk, risk == "low")})
	}
	call(t, c, "may_act", obj{"proposition_id": pid, "action": guardAct([]any{"delete", "file"}, obj{"tool_name": "rm"})})
}

// storeValid puts every document that decodes as a view and the store
// takes (a record id that comes back changed is refused), and returns
// them with whether each is its proposition's latest.
func storeValid(t *testing.T, st *fakeStore, docs []json.RawMessage) (views []*warrant.View, latest []bool) {
	last := map[string]int{}
	for _, doc := range docs {
		v, err := warrant.DecodeView(doc)
		if err != nil {
			continue
		}
		if ok, err := st.Put(context.Background(), v); err == nil && ok {
			last[v.PropositionID] = len(views)
			views = append(views, v)
		}
	}
	latest = make([]bool, len(views))
	for _, i := range last {
		latest[i] = true
	}
	return views, latest
}

// packDocs reads a pack's fixtures and invalid views.
func packDocs(t *testing.T, dir string) []json.RawMessage {
	var out []json.RawMessage
	for _, sub := range []string{"fixtures", "invalid"} {
		for _, f := range sharedtest.PackFiles(t, dir, sub) {
			out = append(out, f.Data)
		}
	}
	return out
}

// docTime is a fixture's evaluated_at when it has a string one, else the
// test clock.
func docTime(doc []byte) string {
	var d struct {
		EvaluatedAt any `json:"evaluated_at"`
	}
	if json.Unmarshal(doc, &d) == nil {
		if s, ok := d.EvaluatedAt.(string); ok && s != "" {
			return s
		}
	}
	return testT
}
