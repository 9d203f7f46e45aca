package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/warrant"
)

func read(t *testing.T, c *client.Client, uri string) (mcpgo.TextResourceContents, error) {
	t.Helper()
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return mcpgo.TextResourceContents{}, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].(mcpgo.TextResourceContents), nil
}

func TestResources(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		ctx := context.Background()
		list, err := c.ListResources(ctx, mcpgo.ListResourcesRequest{})
		if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != protocolURI {
			t.Fatalf("resources: %v %v", list, err)
		}
		tpls, err := c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
		if err != nil || len(tpls.ResourceTemplates) != 2 {
			t.Fatalf("templates: %v %v", tpls, err)
		}
		doc, err := read(t, c, protocolURI)
		if err != nil || !strings.Contains(doc.Text, "Packet rules") || doc.MIMEType != "text/markdown" {
			t.Fatalf("protocol: %v", err)
		}

		// The id "P:x/y z+" is one percent-encoded path segment.
		p, err := read(t, c, "ewp://proposition/P%3Ax%2Fy%20z%2B")
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(p.Text), &v); err != nil || v["proposition_id"] != "P:x/y z+" {
			t.Fatalf("proposition: %s %v", p.Text, err)
		}

		// Raw ':' and a raw '+' offset: the '+' stays '+', not a space.
		const T = "2026-09-21T23:00:00+02:00"
		w, err := read(t, c, "ewp://proposition/P-verified/warrant?evaluated_at="+T)
		if err != nil {
			t.Fatal(err)
		}
		var wv warrant.WarrantView
		if err := json.Unmarshal([]byte(w.Text), &wv); err != nil || wv.EvaluatedAt != T || wv.Warrant.Acceptance != warrant.Accepted {
			t.Fatalf("warrant: %s %v", w.Text, err)
		}
		enc, err := read(t, c, "ewp://proposition/P-verified/warrant?evaluated_at=2026-09-21T23%3A00%3A00%2B02%3A00")
		if err != nil || !strings.Contains(enc.Text, `"evaluated_at":"`+T+`"`) {
			t.Fatalf("percent-encoded T: %v %v", enc.Text, err)
		}

		for _, bad := range []string{"ewp://proposition/P-nope", "ewp://proposition/P-verified/warrant?evaluated_at=soon",
			"ewp://proposition/P-verified/warrant", "ewp://proposition/", "ewp://nothing"} {
			if _, err := read(t, c, bad); err == nil {
				t.Errorf("%s: read should fail", bad)
			}
		}
	})
}

func TestParseResourceURI(t *testing.T) {
	cases := []struct {
		uri  string
		want resourceRef
		bad  bool
	}{
		{uri: "ewp://proposition/P1", want: resourceRef{pid: "P1"}},
		{uri: "ewp://proposition/P%2F1", want: resourceRef{pid: "P/1"}},
		{uri: "ewp://proposition/a+b", want: resourceRef{pid: "a+b"}},
		{uri: "ewp://proposition/P1/warrant?evaluated_at=2026-09-21T10:00:00+02:00", want: resourceRef{pid: "P1", warrant: true, t: "2026-09-21T10:00:00+02:00"}},
		{uri: "ewp://proposition/P1/warrant?evaluated_at=2026-09-21T10%3A00%3A00%2B02%3A00", want: resourceRef{pid: "P1", warrant: true, t: "2026-09-21T10:00:00+02:00"}},
		{uri: "ewp://proposition/P1?x=1", bad: true},
		{uri: "ewp://proposition/P1/warrant?evaluated_at=2026&x=1", bad: true},
		{uri: "ewp://proposition/P%zz", bad: true},
		{uri: "ewp://proposition/P1/warrant/x", bad: true},
	}
	for _, tc := range cases {
		got, err := parseResourceURI(tc.uri)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("%s: got %+v, %v", tc.uri, got, err)
		}
		if !tc.bad {
			again, err := parseResourceURI(got.canonical())
			if err != nil || again != got {
				t.Errorf("%s: canonical form %s does not round-trip", tc.uri, got.canonical())
			}
		}
	}
}

func TestPromptCarriesPacketRules(t *testing.T) {
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		ctx := context.Background()
		list, err := c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
		if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != packetPrompt {
			t.Fatalf("prompts: %v %v", list, err)
		}
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = packetPrompt
		req.Params.Arguments = map[string]string{"proposition_id": "P-conflict"}
		res, err := c.GetPrompt(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		text := res.Messages[0].Content.(mcpgo.TextContent).Text
		for _, r := range packetRules {
			if !strings.Contains(text, r) {
				t.Errorf("prompt lacks rule %q", r)
			}
		}
		if !strings.Contains(text, `memory_context with proposition_id "P-conflict"`) {
			t.Errorf("prompt ignores proposition_id: %s", text)
		}
	})
}

func TestRulesInDescriptionsAndInstructions(t *testing.T) {
	srv, _ := newTestServer(t)
	for name, tool := range srv.MCPServer().ListTools() {
		if *tool.Tool.Annotations.ReadOnlyHint && !strings.Contains(tool.Tool.Description, "conflict=OPEN") {
			t.Errorf("%s: read tool description lacks the packet rules", name)
		}
	}
	if !strings.Contains(instructions(), packetRules[0]) {
		t.Error("instructions lack the packet rules")
	}
}
