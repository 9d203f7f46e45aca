package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

// Every argument of every tool, nested ones included, is replaced by
// malformed values. Each call must come back as a result or a refusal with
// a known, non-internal code and a message; a value of the wrong JSON type
// must be refused with a message naming the argument. A crash or a
// transport error fails the test (call treats both as fatal).

func malformedValues() map[string]any {
	deep := any("bottom")
	for i := 0; i < 64; i++ {
		deep = []any{deep}
	}
	return map[string]any{
		"null": nil, "true": true, "false": false, "zero": 0, "negative": -1, "fraction": 1.5,
		"huge number": 1e308, "big integer": json.Number("123456789012345678901234567890"),
		"empty string": "", "short string": "x", "huge string": strings.Repeat("x", 100_000),
		"odd unicode": "\u0000\uffff\U0001F600", "empty list": []any{}, "mixed list": []any{1, obj{}, nil},
		"empty object": obj{}, "nested object": obj{"a": obj{"b": []any{nil}}}, "deep list": deep,
	}
}

// fuzzBases are valid calls; each is mutated one argument at a time.
func fuzzBases() map[string]obj {
	src := obj{"source_id": "s9", "lineage_id": "L9", "origin_type": "tool", "origin_locator": "loc",
		"snapshot_id": "snap", "content_hash": "h", "observed_at": "2026-09-02", "extractor_id": "x", "parent_source_id": "p"}
	return map[string]obj{
		"list_propositions": {"query": "P", "limit": 10},
		"warrant_now": {"proposition_id": "P-verified", "view_id": "v-verified", "evaluated_at": testT,
			"policy_id": "reference-v2", "policy_version": "reference-v2", "ingest_attestation": false},
		"warrant_now#inline": {"view": seedViews()[0], "evaluated_at": testT, "ingest_attestation": true},
		"evidence_view_get":  {"proposition_id": "P-verified", "view_id": "v-verified"},
		"memory_context":     {"proposition_id": "P-verified", "evaluated_at": testT},
		"may_act": {"proposition_id": "P-verified", "view_id": "v-verified", "evaluated_at": testT,
			"action": action("high", false), "risk_policy": obj{"policy_id": "p", "version": "1",
				"high_requires_accepted": true, "high_requires_no_open_conflict": true}},
		"evidence_view_put": {"view": view("P-fuzz", "v-fuzz", nil), "ingest_attestation": true},
		"evidence_record": {"proposition_id": "P-tentative", "evidence_id": "e-fuzz", "polarity": "supports",
			"content": "c", "observed_at": "2026-09-02", "source": src, "assertion_text": "t",
			"asserted_by": "me", "assertion_confidence": 0.5, "ingest_attestation": true},
		"check_record": {"proposition_id": "P-tentative", "check_id": "k-fuzz", "method": "tool_observation",
			"scope": "s", "result": "supports", "observed_at": "2026-09-02", "subjects": []any{"server01"},
			"source": src, "ingest_attestation": true},
		// The grounding guard's tools and may_act fields (fuzzGuard's demo graph).
		"check_grounding": {"concepts": []any{"delete", "file"}, "min_depth": 2},
		"gap_template":    {"gap": depthGap("file", 4, 3, 4)},
		"learn_gap": {"gap": obj{"kind": "EXISTENCE", "primitive": "network"},
			"candidate": obj{"kind": "EXISTENCE", "name": "network", "d1": obj{"level": 1, "properties": props()}}},
		"may_act#guard": {"proposition_id": "P-verified", "action": guardAct([]any{"delete", "file"},
			obj{"tool_name": "rm", "arguments": obj{"path": "/tmp/x"}, "cardinality": "single", "min_depth": 1})},
	}
}

var knownCodes = []string{
	warrant.CodeInvalidView, warrant.CodeUnknownPolicy, warrant.CodeInvalidAction, warrant.CodeMissingEvaluatedAt,
	warrant.CodeMissingView, warrant.CodeImmutableRecord, warrant.CodePersistWarrant, warrant.CodeUnattestedTrusted,
	warrant.CodeMissingContentHash, warrant.CodeMissingObservedAt, warrant.CodeIngestRole, warrant.CodeEvaluatedAtSkew,
	warrant.CodeStaleViewForAction, warrant.CodeClientRiskPolicy, warrant.CodeLimitExceeded, CodeInvalidArgument,
	grounding.CodeCandidateInvalid, grounding.CodeGapResolved, grounding.CodeInvalidGraph,
}

func TestArgumentFuzz(t *testing.T) {
	srv, st := newTestServer(t, fuzzGuard(t))
	c := dialInProcess(t, srv)
	ingest := withRole(context.Background(), role{ingest: true})
	schemas := inputSchemas(t, srv)
	fresh := seeded(t).snaps
	reset := func() { st.snaps = maps.Clone(fresh) } // each call sees the seeded ledger
	calls := 0
	for name, base := range fuzzBases() {
		tool, _, _ := strings.Cut(name, "#")
		reset()
		mustOK(t, callCtx(ingest, t, c, tool, clone2(base))) // the base itself is valid
		for _, m := range mutations(base, schemas[tool]) {
			reset()
			o := callCtx(ingest, t, c, tool, m.args)
			calls++
			checkOutcome(t, name, m, o)
		}
	}
	t.Logf("%d malformed calls", calls)
}

// Without the role every write refuses every payload with the role code.
func TestArgumentFuzzWithoutRole(t *testing.T) {
	srv, st := newTestServer(t, fuzzGuard(t))
	c := dialInProcess(t, srv)
	schemas := inputSchemas(t, srv)
	for _, tool := range []string{"evidence_view_put", "evidence_record", "check_record", "learn_gap"} {
		for _, m := range mutations(fuzzBases()[tool], schemas[tool]) {
			mustRefuse(t, call(t, c, tool, m.args), warrant.CodeIngestRole)
		}
	}
	if st.count("P-fuzz") != 0 || st.count("P-tentative") != 1 {
		t.Fatal("a write without the role reached the ledger")
	}
}

type mutation struct {
	path, valueName string
	value           any
	wrongType       bool // the value's JSON type is not one the schema allows
	required        bool // the schema requires the argument
	args            obj
}

// mutations replaces each argument, and each field of each object
// argument, by each malformed value.
func mutations(base obj, s map[string]any) []mutation {
	var out []mutation
	props, _ := s["properties"].(map[string]any)
	for key := range base {
		ps, _ := props[key].(map[string]any)
		for vn, v := range malformedValues() {
			args := clone2(base)
			args[key] = v
			out = append(out, mutation{path: key, valueName: vn, value: v, wrongType: !typeAllows(ps, v),
				required: requires(s, key), args: args})
		}
		inner, ok := base[key].(obj)
		if !ok {
			continue
		}
		for sub := range inner {
			sps, _ := ps["properties"].(map[string]any)
			for vn, v := range malformedValues() {
				args := clone2(base)
				args[key].(obj)[sub] = v
				out = append(out, mutation{path: key + "." + sub, valueName: vn, value: v,
					wrongType: key != "view" && !typeAllows(sps[sub].(map[string]any), v),
					required:  key != "view" && requires(ps, sub), args: args})
			}
		}
	}
	return out
}

func checkOutcome(t *testing.T, tool string, m mutation, o outcome) {
	t.Helper()
	where := fmt.Sprintf("%s %s=%s", tool, m.path, m.valueName)
	if o.code == "" {
		if m.wrongType {
			t.Errorf("%s: a value of the wrong type was accepted", where)
		}
		return
	}
	if !slices.Contains(knownCodes, o.code) {
		t.Errorf("%s: unexpected code %s: %s", where, o.code, o.msg)
	}
	leaf := m.path[strings.LastIndex(m.path, ".")+1:]
	named := m.wrongType || (m.value == nil && m.required)
	if named && !strings.Contains(o.msg, leaf) {
		t.Errorf("%s: refusal does not name %s: %s %s", where, leaf, o.code, o.msg)
	}
}

func requires(s map[string]any, key string) bool {
	req, _ := s["required"].([]any)
	return slices.Contains(req, any(key))
}

// typeAllows reports whether the schema's type admits v. Numbers are
// admitted where strings are, since ids and times convert them.
func typeAllows(s map[string]any, v any) bool {
	if v == nil {
		return true // null is "missing", judged separately
	}
	var types []string
	switch ty := s["type"].(type) {
	case string:
		types = []string{ty}
	case []any:
		for _, x := range ty {
			types = append(types, x.(string))
		}
	default:
		return true
	}
	for _, ty := range types {
		if jsonKindIs(v, ty) {
			return true
		}
	}
	return false
}

func jsonKindIs(v any, ty string) bool {
	switch v.(type) {
	case bool:
		return ty == "boolean"
	case string:
		return ty == "string"
	case []any:
		return ty == "array"
	case obj:
		return ty == "object"
	case int, float64, json.Number:
		f, _ := json.Marshal(v)
		integral := !strings.ContainsAny(string(f), ".eE")
		return ty == "number" || ty == "string" || (ty == "integer" && integral)
	}
	return false
}

func inputSchemas(t *testing.T, srv *Server) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, st := range srv.MCPServer().ListTools() {
		var s map[string]any
		mustUnmarshal(t, json.RawMessage(st.Tool.RawInputSchema), &s)
		out[name] = s
	}
	return out
}

// clone2 deep-copies a JSON-shaped value.
func clone2(o obj) obj {
	b, _ := json.Marshal(o)
	var c obj
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	_ = d.Decode(&c)
	return c
}
