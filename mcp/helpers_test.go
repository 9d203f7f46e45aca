package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/warrant"
)

// testNow is the server clock in tests.
var testNow = time.Date(2026, 9, 21, 21, 0, 0, 0, time.UTC)

const (
	testT     = "2026-09-21T21:00:00Z" // == testNow
	testToken = "s3cret-ingest-token"
)

type obj = map[string]any

// src builds a SourceRef; origin decides trust.
func src(id, origin string) obj {
	return obj{"source_id": id, "lineage_id": "L-" + id, "origin_type": origin,
		"origin_locator": "loc:" + id, "snapshot_id": "snap:" + id,
		"content_hash": "sha256:" + id, "observed_at": "2026-09-01T00:00:00Z"}
}

func assertion(id, text, origin string) obj {
	return obj{"assertion_id": id, "text": text, "asserted_by": "agent", "assertion_confidence": 0.9,
		"asserted_at": "2026-09-01T00:00:00Z", "source": src("s-"+id, origin)}
}

func evidence(id, polarity, origin string) obj {
	return obj{"evidence_id": id, "polarity": polarity, "content": "observed " + id,
		"observed_at": "2026-09-01T00:00:00Z", "source": src("s-"+id, origin)}
}

func check(id, method, result, origin, at string) obj {
	return obj{"check_id": id, "method": method, "scope": "server01", "result": result,
		"observed_at": at, "source": src("s-"+id, origin)}
}

// view builds an EvidenceView; extra keys override the defaults.
func view(pid, vid string, extra obj) obj {
	v := obj{"proposition_id": pid, "view_id": vid,
		"assertions": []any{assertion("a1", "server01 runs Windows Server 2022", "turn")}}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

// The seeded propositions, one per warrant situation the tools must report.
func seedViews() []obj {
	toolCheck := check("k1", "tool_observation", "supports", "tool", "2026-09-21T18:31:00Z")
	return []obj{
		view("P-verified", "v-verified", obj{"freshness_policy_seconds": 604800,
			"evidence": []any{evidence("e1", "supports", "tool")}, "checks": []any{toolCheck}}),
		view("P-tentative", "v-tentative", nil),
		view("P-conflict", "v-conflict", obj{"conflicts": []any{obj{"conflict_id": "c1", "status": "open",
			"proposition_ids": []any{"P-conflict"}}}}),
		view("P-contradicted", "v-contradicted", obj{"evidence": []any{evidence("e1", "supports", "turn")},
			"checks": []any{check("k1", "tool_observation", "opposes", "tool", "2026-09-20T09:00:00Z")}}),
		view("P-degraded", "v-degraded", obj{"degraded": true}),
		view("P-superseded", "v-superseded", obj{"lineage": []any{obj{"kind": "superseded_by",
			"from_id": "P-superseded", "to_id": "P-new"}}}),
		view("P-stale", "v-stale", obj{"freshness_policy_seconds": 3600,
			"checks": []any{check("k1", "tool_observation", "supports", "tool", "2026-09-01T00:00:00Z")}}),
		{"proposition_id": "P-empty", "view_id": "v-empty"},
		view("P:x/y z+", "v-odd", nil), // an id that needs percent-encoding
		view("12", "v-12", nil),        // an id a caller may send as a number
	}
}

func mustJSONText(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seeded(t testing.TB) *fakeStore {
	t.Helper()
	st := newFakeStore()
	for _, v := range seedViews() {
		dv, err := warrant.DecodeView(mustJSONText(t, v))
		if err != nil {
			t.Fatalf("seed %v: %v", v["proposition_id"], err)
		}
		if _, err := st.Put(context.Background(), dv); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestServer(t testing.TB, opts ...Option) (*Server, *fakeStore) {
	t.Helper()
	st := seeded(t)
	base := []Option{WithClock(func() time.Time { return testNow }), WithLogger(quietLogger())}
	return New(st, append(base, opts...)...), st
}

// eachTransport runs fn against a fresh seeded server over every
// transport, with the client holding the ingest role or not.
func eachTransport(t *testing.T, ingest bool, fn func(t *testing.T, c *client.Client, st *fakeStore), opts ...Option) {
	for _, d := range dialers {
		t.Run(d.name, func(t *testing.T) {
			srv, st := newTestServer(t, opts...)
			fn(t, d.dial(t, srv, ingest), st)
		})
	}
}

// A dialer connects an mcp-go client to srv over one transport, with or
// without the ingest role.
type dialer struct {
	name string
	dial func(t *testing.T, srv *Server, ingest bool) *client.Client
}

var dialers = []dialer{{"http", dialHTTP}, {"stdio", dialStdio}}

func dialHTTP(t *testing.T, srv *Server, ingest bool) *client.Client {
	t.Helper()
	ts := httpTestServer(t, srv)
	var opts []transport.StreamableHTTPCOption
	if ingest {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
	}
	c, err := client.NewStreamableHttpClient(ts.URL+EndpointPath, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

func httpTestServer(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	h, err := srv.HTTPHandler(HTTPConfig{Addr: ts.Listener.Addr().String(), IngestToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

func dialStdio(t *testing.T, srv *Server, ingest bool) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW, ingest); _ = outW.Close() }()
	t.Cleanup(func() {
		_ = inW.Close()
		cancel()
		<-done
	})
	return start(t, client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader("")))))
}

func dialInProcess(t *testing.T, srv *Server) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

// clientInProcess is dialInProcess for benchmarks, which must not register
// cleanups per iteration.
func clientInProcess(srv *Server) (*client.Client, error) {
	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "ewp-bench", Version: "0"}
	_, err = c.Initialize(ctx, req)
	return c, err
}

// start starts c and negotiates the newest revision both sides speak
// (or the one pinned with client.WithProtocolVersion).
func start(t testing.TB, c *client.Client) *client.Client {
	t.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "ewp-test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// outcome is a tool call's result: the structured content, or the
// refusal.
type outcome struct {
	out        obj
	code       string
	msg        string
	decisionID string // a refusal's record, when it is recorded
}

func call(t testing.TB, c *client.Client, tool string, arguments any) outcome {
	t.Helper()
	return callCtx(context.Background(), t, c, tool, arguments)
}

func callCtx(ctx context.Context, t testing.TB, c *client.Client, tool string, arguments any) outcome {
	t.Helper()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = arguments
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: transport error: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		var te toolError
		if err := json.Unmarshal([]byte(text), &te); err != nil || te.Error == "" {
			t.Fatalf("%s: isError text is not {error, message}: %q", tool, text)
		}
		return outcome{code: te.Error, msg: te.Message, decisionID: te.DecisionID}
	}
	var o obj
	if err := json.Unmarshal(mustJSONText(t, res.StructuredContent), &o); err != nil || o == nil {
		t.Fatalf("%s: no structuredContent object: %v", tool, res.StructuredContent)
	}
	// The server does not check results against their schemas; every test
	// does, here (output_schema_test.go).
	checkOutputSchema(t, c, tool, res.RawStructuredContent)
	var fromText obj
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("%s: text content is not the JSON result: %q", tool, text)
	}
	return outcome{out: o}
}

func mustOK(t testing.TB, o outcome) obj {
	t.Helper()
	if o.code != "" {
		t.Fatalf("refused %s: %s", o.code, o.msg)
	}
	return o.out
}

func mustRefuse(t testing.TB, o outcome, code string) string {
	t.Helper()
	if o.code != code {
		t.Fatalf("want refusal %s, got code %q (%s) out %v", code, o.code, o.msg, o.out)
	}
	if o.msg == "" {
		t.Fatalf("refusal %s without a message", code)
	}
	return o.msg
}

// axes reads the warrant axes of a result.
func axes(t testing.TB, out obj) obj {
	t.Helper()
	w, ok := out["warrant"].(obj)
	if !ok {
		t.Fatalf("no warrant in %v", out)
	}
	return w
}
