package mcp

import (
	"bytes"
	"context"
	"slices"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ewp-go/ewp/gate"
)

// With the guard installed the three guard tools are listed with the
// annotations of reads and writes, and every parameter is described.
func TestGuardToolsListed(t *testing.T) {
	c := dialInProcess(t, demoServer(t))
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcpgo.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"check_grounding", "gap_template", "learn_gap", "may_act"} {
		tool, ok := byName[name]
		if !ok {
			t.Fatalf("%s is not listed", name)
		}
		var wire map[string]any
		mustUnmarshal(t, tool, &wire)
		checkDescribed(t, name, wire["inputSchema"].(map[string]any))
		if name != "may_act" { // its warrant axes are the EWP tools' shared schema
			checkDescribed(t, name+"→", wire["outputSchema"].(map[string]any))
		}
		a := tool.Annotations
		if name == "learn_gap" {
			if a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("learn_gap: a write needs readOnlyHint false, destructiveHint false")
			}
			continue
		}
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: a read needs readOnlyHint true, openWorldHint false", name)
		}
	}
	action := byName["may_act"].InputSchema.Properties["action"].(map[string]any)["properties"].(map[string]any)
	for _, k := range gate.GuardActionKeys {
		if _, ok := action[k]; !ok {
			t.Errorf("may_act's action schema lacks %s", k)
		}
	}
	if req := byName["may_act"].InputSchema.Required; slices.Contains(req, "proposition_id") {
		t.Errorf("with the guard, proposition_id is optional: required %v", req)
	}
}

// mcp-go skips output validation for a schema that does not compile, so a
// typo in a schema would silently switch the check off. Compile them all.
func TestGuardSchemasCompile(t *testing.T) {
	srv := demoServer(t)
	for name, st := range srv.MCPServer().ListTools() {
		for kind, raw := range map[string][]byte{"input": st.Tool.RawInputSchema, "output": st.Tool.RawOutputSchema} {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s %s schema: %v", name, kind, err)
			}
			comp := jsonschema.NewCompiler()
			url := "mem:///" + name + "/" + kind + ".json"
			if err := comp.AddResource(url, doc); err != nil {
				t.Fatal(err)
			}
			if _, err := comp.Compile(url); err != nil {
				t.Errorf("%s %s schema does not compile: %v", name, kind, err)
			}
		}
	}
}
