package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/warrant"
)

var referenceEight = []string{"ewp_check_record", "ewp_evidence_record", "ewp_evidence_view_get", "ewp_evidence_view_put",
	"ewp_list_propositions", "ewp_may_act", "ewp_memory_context", "ewp_warrant_now"}

func toolList(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// Under the reference's names the eight tools are listed as the
// reference lists them, and only so; the default names are unchanged.
func TestReferenceToolNamesListed(t *testing.T) {
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		if got := toolList(t, c); !slices.Equal(got, referenceEight) {
			t.Errorf("tools/list %v, want %v", got, referenceEight)
		}
		mustOK(t, call(t, c, "ewp_warrant_now", obj{"proposition_id": "P-tentative", "evaluated_at": "2026-09-21T18:00:00Z"}))
	}, WithToolNames(ToolNamesReference))
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		if got := toolList(t, c); slices.Contains(got, "ewp_warrant_now") || !slices.Contains(got, "warrant_now") {
			t.Errorf("default names changed: %v", got)
		}
	})
}

// The reference's argument shapes reach the same handlers: a nested
// check or evidence record, text as the assertion, may_act without an
// action_id or kind, memory_context at a view_id.
func TestReferenceToolShapes(t *testing.T) {
	source := obj{"content_hash": "h", "observed_at": "2026-09-02"}
	eachTransport(t, true, func(t *testing.T, c *client.Client, st *fakeStore) {
		out := mustOK(t, call(t, c, "ewp_check_record", obj{"proposition_id": "P-tentative",
			"check": obj{"check_id": "k9", "method": "inference", "scope": "x", "result": "supports", "source": source}}))
		if out["check_id"] != "k9" || st.count("P-tentative") != 2 {
			t.Fatalf("check_record: %v", out)
		}
		out = mustOK(t, call(t, c, "ewp_evidence_record", obj{"proposition_id": "P-tentative", "text": "it holds",
			"evidence": obj{"evidence_id": "e9", "polarity": "supports", "content": "x", "observed_at": "2026-09-02", "source": source}}))
		got := mustOK(t, call(t, c, "ewp_evidence_view_get", obj{"proposition_id": "P-tentative", "view_id": out["view_id"]}))
		if view := string(mustJSONText(t, got["view"])); !strings.Contains(view, `"assertion_id":"a:e9"`) || !strings.Contains(view, `"text":"it holds"`) {
			t.Errorf("text did not become the assertion: %v", got["view"])
		}
		act := mustOK(t, call(t, c, "ewp_may_act", obj{"proposition_id": "P-tentative", "action": obj{"risk": "low", "reversible": true}}))
		if a, _ := act["action"].(obj); act["decision"] == nil || a["action_id"] != unnamedAction || a["kind"] != unnamedAction {
			t.Errorf("may_act without action_id and kind: %v", act)
		}
		ctx := mustOK(t, call(t, c, "ewp_memory_context", obj{"proposition_id": "P-tentative", "view_id": "v-tentative",
			"query": "anything", "evaluated_at": "2026-09-21T18:00:00Z"}))
		if ctx["view_id"] != "v-tentative" {
			t.Errorf("memory_context at view_id v-tentative answered %v", ctx["view_id"])
		}
		mustRefuse(t, call(t, c, "ewp_memory_context", obj{"proposition_id": "P-tentative", "view_id": "v-none"}), warrant.CodeMissingView)
	}, WithToolNames(ToolNamesReference))
}

// What the reference's shapes cannot mean here is refused, naming the
// argument: new_view_id, a record field given beside the record, our own
// flat shape under the reference's name.
func TestReferenceToolRefusals(t *testing.T) {
	source := obj{"content_hash": "h", "observed_at": "2026-09-02"}
	check := obj{"check_id": "k9", "method": "inference", "scope": "x", "result": "supports", "source": source}
	eachTransport(t, true, func(t *testing.T, c *client.Client, st *fakeStore) {
		cases := []struct {
			tool  string
			args  obj
			field string
		}{
			{"ewp_check_record", obj{"proposition_id": "P-tentative", "check": check, "new_view_id": "v-mine"}, "new_view_id"},
			{"ewp_check_record", obj{"proposition_id": "P-tentative", "check_id": "k9", "check": check}, "check_id"},
			{"ewp_check_record", obj{"proposition_id": "P-tentative", "check": "k9"}, "check"},
			{"ewp_evidence_record", obj{"proposition_id": "P-tentative", "evidence_id": "e9", "polarity": "supports", "content": "x", "source": source}, "content"},
			{"ewp_memory_context", obj{"proposition_id": "P-tentative", "query": obj{}}, "query"},
		}
		for _, tc := range cases {
			msg := mustRefuse(t, call(t, c, tc.tool, tc.args), CodeInvalidArgument)
			if !strings.HasPrefix(msg, tc.field) {
				t.Errorf("%s %v: message %q should name %s", tc.tool, tc.args, msg, tc.field)
			}
		}
		if st.count("P-tentative") != 1 {
			t.Error("a refused write changed the ledger")
		}
	}, WithToolNames(ToolNamesReference))
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		mustRefuse(t, call(t, c, "memory_context", obj{"proposition_id": "P-tentative", "view_id": "v-tentative"}), CodeInvalidArgument)
	})
}
