package front

import (
	"context"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Passthrough is a registry that passes some servers' resources and
// prompts through, as the config says per server. They are reads of what
// a server offers, not actions, so they do not go through the gate.
type Passthrough interface {
	// Passing is which servers pass their resources and their prompts.
	Passing() (resources, prompts []string)
	ListResources(ctx context.Context, server string) ([]mcp.Resource, error)
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
	ListPrompts(ctx context.Context, server string) ([]mcp.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
}

// passWait bounds one listing of a passing server.
const passWait = 10 * time.Second

// SyncPassthrough lists the passing servers' resources and prompts anew
// and offers them: a resource under its own URI (the first server, by
// name, that lists a URI has it; a later one is logged and left out), a
// prompt as SERVER__PROMPT. A server that cannot be listed keeps nothing
// offered until the next sync. It does nothing for a registry that is not
// a Passthrough.
func (f *Front) SyncPassthrough(ctx context.Context) {
	p, ok := f.cfg.Downstreams.(Passthrough)
	if !ok {
		return
	}
	res, prompts := p.Passing()
	sort.Strings(res)
	sort.Strings(prompts)
	var rs []server.ServerResource
	seen := map[string]string{}
	for _, srv := range res {
		lctx, cancel := context.WithTimeout(ctx, passWait)
		list, err := p.ListResources(lctx, srv)
		cancel()
		if err != nil {
			f.cfg.Log.Warn("resources not passed through", "server", srv, "err", err)
			continue
		}
		for _, r := range list {
			if other, dup := seen[r.URI]; dup {
				f.cfg.Log.Warn("resource URI listed by two servers: the first is passed", "uri", r.URI, "passed", other, "left_out", srv)
				continue
			}
			seen[r.URI] = srv
			rs = append(rs, server.ServerResource{Resource: r, Handler: f.readFrom(p, srv)})
		}
	}
	var ps []server.ServerPrompt
	for _, srv := range prompts {
		lctx, cancel := context.WithTimeout(ctx, passWait)
		list, err := p.ListPrompts(lctx, srv)
		cancel()
		if err != nil {
			f.cfg.Log.Warn("prompts not passed through", "server", srv, "err", err)
			continue
		}
		for _, pr := range list {
			name := pr.Name
			pr.Name = Exposed(srv, name)
			ps = append(ps, server.ServerPrompt{Prompt: pr, Handler: f.promptFrom(p, srv, name)})
		}
	}
	if len(res) > 0 {
		f.mcp.SetResources(rs...)
	}
	if len(prompts) > 0 {
		f.mcp.SetPrompts(ps...)
	}
}

func (f *Front) readFrom(p Passthrough, srv string) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		r, err := p.ReadResource(ctx, srv, req.Params.URI)
		if err != nil {
			return nil, err
		}
		return r.Contents, nil
	}
}

func (f *Front) promptFrom(p Passthrough, srv, name string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return p.GetPrompt(ctx, srv, name, req.Params.Arguments)
	}
}
