package downstream

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResourcesAndPromptsPassThroughPerServer(t *testing.T) {
	open := stdioServer(t, "open", nil)
	open.Resources, open.Prompts = true, true
	web := httpServer(t, "web")
	web.Resources = true
	r, _ := start(t, Options{}, open, web, stdioServer(t, "closed", nil))
	ctx := context.Background()
	for _, server := range []string{"open", "web"} {
		res, err := r.ListResources(ctx, server)
		if err != nil || len(res) != 1 || res[0].URI != "fake://readme" {
			t.Fatalf("%s: resources = %+v, %v", server, res, err)
		}
		got, err := r.ReadResource(ctx, server, "fake://readme")
		if err != nil || len(got.Contents) != 1 || got.Contents[0].(mcp.TextResourceContents).Text != "read me" {
			t.Fatalf("%s: read = %+v, %v", server, got, err)
		}
	}
	ps, err := r.ListPrompts(ctx, "open")
	if err != nil || len(ps) != 1 || ps[0].Name != "greet" {
		t.Fatalf("prompts = %+v, %v", ps, err)
	}
	p, err := r.GetPrompt(ctx, "open", "greet", map[string]string{"name": "ada"})
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(mcp.TextContent).Text != "hello ada" {
		t.Fatalf("prompt = %+v, %v", p, err)
	}
	_, err = r.ListPrompts(ctx, "web")
	wantCode(t, err, CodeNotPassed, "web")
	_, err = r.ListResources(ctx, "closed")
	wantCode(t, err, CodeNotPassed, "closed")
	_, err = r.ReadResource(ctx, "nobody", "fake://readme")
	wantCode(t, err, CodeUnavailable, "nobody")
	if _, err := r.ReadResource(ctx, "open", "fake://missing"); CodeOf(err) != CodeError {
		t.Errorf("a missing resource: %v, want %s", err, CodeError)
	}
}
