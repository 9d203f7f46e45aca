package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/warrant"
)

func TestToolsListDescribesEveryTool(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"check_record", "evidence_record", "evidence_view_get", "evidence_view_put",
		"list_propositions", "may_act", "memory_context", "warrant_now"}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
		checkAnnotations(t, tool)
		var wire map[string]any
		mustUnmarshal(t, tool, &wire)
		in, _ := wire["inputSchema"].(map[string]any)
		out, _ := wire["outputSchema"].(map[string]any)
		if in["type"] != "object" || out["type"] != "object" {
			t.Errorf("%s: input and output schemas must be objects", tool.Name)
		}
		checkDescribed(t, tool.Name, in)
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
}

// mustUnmarshal re-decodes raw's JSON form into into.
func mustUnmarshal(t *testing.T, raw any, into any) {
	t.Helper()
	if err := json.Unmarshal(mustJSONText(t, raw), into); err != nil {
		t.Fatal(err)
	}
}

func checkAnnotations(t *testing.T, tool mcpgo.Tool) {
	t.Helper()
	a := tool.Annotations
	write := strings.HasSuffix(tool.Name, "_put") || strings.HasSuffix(tool.Name, "_record")
	switch {
	case write && (a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint):
		t.Errorf("%s: a write needs readOnlyHint false, destructiveHint false", tool.Name)
	case !write && (a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint):
		t.Errorf("%s: a read needs readOnlyHint true, openWorldHint false", tool.Name)
	}
}

// checkDescribed walks a schema: every property, nested ones included,
// carries a non-empty description.
func checkDescribed(t *testing.T, path string, s map[string]any) {
	t.Helper()
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		ps := p.(map[string]any)
		if d, _ := ps["description"].(string); d == "" {
			t.Errorf("%s.%s has no description", path, name)
		}
		checkDescribed(t, path+"."+name, ps)
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkDescribed(t, path+"[]", items)
	}
}

func TestListPropositions(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		all := mustOK(t, call(t, c, "list_propositions", obj{}))
		if all["count"] != float64(len(seedViews())) {
			t.Fatalf("count %v", all["count"])
		}
		two := mustOK(t, call(t, c, "list_propositions", obj{"limit": 2}))
		if n := len(two["propositions"].([]any)); n != 2 {
			t.Fatalf("limit 2 gave %d", n)
		}
		hits := mustOK(t, call(t, c, "list_propositions", obj{"query": "CONTRADICTED"}))
		first := hits["propositions"].([]any)[0].(obj)
		if hits["count"] != 1.0 || first["proposition_id"] != "P-contradicted" || first["latest_view_id"] != "v-contradicted" {
			t.Fatalf("query by id: %v", hits)
		}
		if texts := first["texts"].([]any); len(texts) != 1 || texts[0] != "server01 runs Windows Server 2022" {
			t.Fatalf("texts %v", texts)
		}
		for _, bad := range []any{0, 501, 2.5, "10", true} {
			mustRefuse(t, call(t, c, "list_propositions", obj{"limit": bad}), CodeInvalidArgument)
		}
	})
}

func TestWarrantNowStored(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		out := mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-21T21:00:00+00:00"}))
		ax := axes(t, out)
		if ax["acceptance"] != warrant.Accepted || ax["verification"] != warrant.VerExternal {
			t.Fatalf("axes %v", ax)
		}
		for k, want := range map[string]any{"protocol_version": "EWP-0.2.0", "policy_id": "reference-v2",
			"policy_version": "reference-v2", "view_id": "v-verified", "evaluated_at": "2026-09-21T21:00:00+00:00"} {
			if out[k] != want {
				t.Errorf("%s = %v, want %v", k, out[k], want)
			}
		}
		if _, ok := out["inline_origins_demoted"]; ok {
			t.Error("a stored proposition has no inline demotion")
		}
		// Before the check was observed, it confers nothing.
		early := mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "view_id": "v-verified", "evaluated_at": "2026-09-02"}))
		if axes(t, early)["verification"] != warrant.VerNone {
			t.Fatalf("early axes %v", axes(t, early))
		}
		mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": testT,
			"policy_id": "reference-v2", "policy_version": "reference-v2"}))
		// An id given as a number is read as its text; evaluated_at must be a string.
		num := mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": 12, "evaluated_at": "20260922"}))
		if num["proposition_id"] != "12" || num["evaluated_at"] != "20260922" {
			t.Fatalf("numbers as text: %v", num)
		}

	})
}

func TestWarrantNowRefusals(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	cases := []struct {
		args obj
		code string
	}{
		{obj{"proposition_id": "P-verified"}, warrant.CodeMissingEvaluatedAt},
		{obj{"proposition_id": "P-verified", "evaluated_at": ""}, warrant.CodeMissingEvaluatedAt},
		{obj{"proposition_id": "P-verified", "evaluated_at": nil}, warrant.CodeMissingEvaluatedAt},
		{obj{"proposition_id": "P-nope", "evaluated_at": testT}, warrant.CodeMissingView},
		{obj{"proposition_id": "P-verified", "view_id": "v-nope", "evaluated_at": testT}, warrant.CodeMissingView},
		{obj{"proposition_id": "P-verified", "evaluated_at": "yesterday"}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-21T24:00:00"}, warrant.CodeInvalidView},
		// Never str()-ed: 20260921 would parse as a basic-format date.
		{obj{"proposition_id": "P-verified", "evaluated_at": 20260921}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": 20260921.5}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": true}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": []any{testT}}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": obj{"t": testT}}, warrant.CodeInvalidView},
		{obj{"proposition_id": "P-verified", "evaluated_at": testT, "policy_id": "reference-v1"}, warrant.CodeUnknownPolicy},
		{obj{"proposition_id": "P-verified", "evaluated_at": testT, "policy_version": 2}, warrant.CodeUnknownPolicy},
		{obj{"evaluated_at": testT}, CodeInvalidArgument},
		{obj{"proposition_id": "P-verified", "evaluated_at": testT, "evaluatedAt": testT}, CodeInvalidArgument},
		{obj{"view": view("P-inline", "v-1", obj{"evidence": []any{evidence("e1", "maybe", "turn")}}), "evaluated_at": testT}, warrant.CodeInvalidView},
		{obj{"view": "not a view", "evaluated_at": testT}, warrant.CodeInvalidView},
		{obj{"view": view("P-inline", "v-1", nil), "proposition_id": "P-inline", "evaluated_at": testT}, CodeInvalidArgument},
		{obj{"view": obj{"proposition_id": "P-x", "protocol_version": "EWP-0.2.0", "warrant": obj{}}, "evaluated_at": testT}, warrant.CodeInvalidView},
		{obj{"view": view("P-inline", "v-1", nil), "evaluated_at": testT, "ingest_attestation": "true"}, warrant.CodeUnattestedTrusted},
	}
	for _, tc := range cases {
		mustRefuse(t, call(t, c, "warrant_now", tc.args), tc.code)
	}
}

func TestWarrantNowInlineDemotion(t *testing.T) {
	inline := seedViews()[0] // P-verified: ACCEPTED on the strength of a tool check
	for _, d := range dialers {
		t.Run(d.name, func(t *testing.T) {
			// One server per client: mcp-go allows one stdio session per server.
			srvA, _ := newTestServer(t)
			srvB, _ := newTestServer(t)
			agent, ingest := d.dial(t, srvA, false), d.dial(t, srvB, true)
			cases := []struct {
				name     string
				c        *client.Client
				attest   bool
				demoted  []any
				accepted string
			}{
				{"agent", agent, false, []any{"tool"}, warrant.Tentative},
				{"agent claiming attestation", agent, true, []any{"tool"}, warrant.Tentative},
				{"ingest without attestation", ingest, false, []any{"tool"}, warrant.Tentative},
				{"attested ingest", ingest, true, []any{}, warrant.Accepted},
			}
			for _, tc := range cases {
				out := mustOK(t, call(t, tc.c, "warrant_now", obj{"view": inline, "evaluated_at": testT, "ingest_attestation": tc.attest}))
				if got := out["inline_origins_demoted"]; !slices.Equal(got.([]any), tc.demoted) {
					t.Errorf("%s: demoted %v, want %v", tc.name, got, tc.demoted)
				}
				if ax := axes(t, out); ax["acceptance"] != tc.accepted {
					t.Errorf("%s: acceptance %v, want %v", tc.name, ax["acceptance"], tc.accepted)
				}
			}
		})
	}
}

func TestEvidenceViewGet(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		out := mustOK(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-conflict"}))
		if out["view_id"] != "v-conflict" || out["is_latest"] != true || out["latest_view_id"] != "v-conflict" {
			t.Fatalf("get: %v", out)
		}
		v := out["view"].(obj)
		if v["proposition_id"] != "P-conflict" || len(v["conflicts"].([]any)) != 1 {
			t.Fatalf("view: %v", v)
		}
		mustOK(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-conflict", "view_id": "v-conflict"}))
		mustRefuse(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-conflict", "view_id": "v-old"}), warrant.CodeMissingView)
		mustRefuse(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-nope"}), warrant.CodeMissingView)
		mustRefuse(t, call(t, c, "evidence_view_get", obj{}), CodeInvalidArgument)
	})
}

func TestEvidenceViewGetOlderSnapshot(t *testing.T) {
	srv, st := newTestServer(t)
	c := dialInProcess(t, srv)
	ctx := withRole(context.Background(), role{ingest: true})
	mustOK(t, callCtx(ctx, t, c, "evidence_record", obj{"proposition_id": "P-tentative", "evidence_id": "e9",
		"polarity": "supports", "content": "x", "source": obj{"content_hash": "h", "observed_at": "2026-09-02"}}))
	if st.count("P-tentative") != 2 {
		t.Fatal("append did not make a snapshot")
	}
	old := mustOK(t, call(t, c, "evidence_view_get", obj{"proposition_id": "P-tentative", "view_id": "v-tentative"}))
	if old["is_latest"] != false || old["latest_view_id"] == "v-tentative" {
		t.Fatalf("old snapshot: %v", old)
	}
}

func TestMemoryContextWarnings(t *testing.T) {
	cases := map[string][]string{
		"P-verified":     {},
		"P-tentative":    {"acceptance=TENTATIVE"},
		"P-conflict":     {"conflict=OPEN", "acceptance=TENTATIVE"},
		"P-contradicted": {"conflict=OPEN", "a trusted EXTERNAL check OPPOSES", "acceptance=TENTATIVE"},
		"P-degraded":     {"sufficiency=DEGRADED", "acceptance=TENTATIVE"},
		"P-superseded":   {"currency=SUPERSEDED", "acceptance=TENTATIVE"},
		"P-stale":        {"currency=STALE", "acceptance=TENTATIVE"},
		"P-empty":        {"acceptance=UNACCEPTED"},
	}
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		for pid, want := range cases {
			out := mustOK(t, call(t, c, "memory_context", obj{"proposition_id": pid}))
			got := out["warnings"].([]any)
			if len(got) != len(want) {
				t.Errorf("%s: warnings %v, want prefixes %v", pid, got, want)
				continue
			}
			for i, w := range want {
				if !strings.HasPrefix(got[i].(string), w) {
					t.Errorf("%s: warning %d = %q, want prefix %q", pid, i, got[i], w)
				}
			}
			if out["evaluated_at"] != testNow.Format(timeLayout) || len(out["rules"].([]any)) != len(packetRules) {
				t.Errorf("%s: evaluated_at %v, rules %v", pid, out["evaluated_at"], out["rules"])
			}
		}
	})
}

func TestMemoryContextAtGivenInstant(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	// A week before the tool check, P-verified had only an agent's word.
	out := mustOK(t, call(t, c, "memory_context", obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-14T00:00:00Z"}))
	if out["evaluated_at"] != "2026-09-14T00:00:00Z" || axes(t, out)["verification"] != warrant.VerNone {
		t.Fatalf("%v", out)
	}
	mustRefuse(t, call(t, c, "memory_context", obj{"proposition_id": "P-nope"}), warrant.CodeMissingView)
	mustRefuse(t, call(t, c, "memory_context", obj{"proposition_id": "P-verified", "evaluated_at": "soon"}), warrant.CodeInvalidView)
	mustRefuse(t, call(t, c, "memory_context", obj{}), CodeInvalidArgument)
}

func TestStoreFailureIsInternal(t *testing.T) {
	srv, st := newTestServer(t)
	c := dialInProcess(t, srv)
	st.fail = errDiskOnFire
	msg := mustRefuse(t, call(t, c, "memory_context", obj{"proposition_id": "P-verified"}), CodeInternal)
	if !strings.Contains(msg, "disk on fire") {
		t.Fatalf("message %q hides the cause", msg)
	}
}
