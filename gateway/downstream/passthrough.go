package downstream

import (
	"context"
	"log/slog"

	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/mark3labs/mcp-go/mcp"
)

// Resources and prompts pass through as the servers give them, for the
// servers whose config says so ("resources": true, "prompts": true);
// others are refused with EWP_DOWNSTREAM_NOT_PASSED. The gateway decides
// how to name them to the agent.

// ListResources lists every resource of server (all pages).
func (r *Registry) ListResources(ctx context.Context, server string) ([]mcp.Resource, error) {
	return passed(r, ctx, server, "resources", func(ctx context.Context, s *session) ([]mcp.Resource, error) {
		res, err := s.cli.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			return nil, err
		}
		return res.Resources, nil
	})
}

// ListResourceTemplates lists every resource template of server.
func (r *Registry) ListResourceTemplates(ctx context.Context, server string) ([]mcp.ResourceTemplate, error) {
	return passed(r, ctx, server, "resources", func(ctx context.Context, s *session) ([]mcp.ResourceTemplate, error) {
		res, err := s.cli.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil {
			return nil, err
		}
		return res.ResourceTemplates, nil
	})
}

// ReadResource reads uri from server.
func (r *Registry) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	return passed(r, ctx, server, "resources", func(ctx context.Context, s *session) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		return s.cli.ReadResource(ctx, req)
	})
}

// ListPrompts lists every prompt of server.
func (r *Registry) ListPrompts(ctx context.Context, server string) ([]mcp.Prompt, error) {
	return passed(r, ctx, server, "prompts", func(ctx context.Context, s *session) ([]mcp.Prompt, error) {
		res, err := s.cli.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			return nil, err
		}
		return res.Prompts, nil
	})
}

// GetPrompt gets prompt name of server with args.
func (r *Registry) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return passed(r, ctx, server, "prompts", func(ctx context.Context, s *session) (*mcp.GetPromptResult, error) {
		req := mcp.GetPromptRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		return s.cli.GetPrompt(ctx, req)
	})
}

// passed runs one pass-through request on server's live session within
// its timeout, with the same named errors as a call.
func passed[T any](r *Registry, ctx context.Context, server, what string, do func(context.Context, *session) (T, error)) (T, error) {
	var zero T
	c, ok := r.conns[server]
	if !ok {
		return zero, errorf(CodeUnavailable, server, "", nil, "no downstream server is named %q", termtext.Escape(server))
	}
	if (what == "resources" && !c.srv.Resources) || (what == "prompts" && !c.srv.Prompts) {
		return zero, errorf(CodeNotPassed, server, "", nil, "the gateway does not pass server %s's %s through (its config says \"%s\": false)", server, what, what)
	}
	s := c.session()
	if s == nil {
		return zero, c.unavailable("")
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	v, err := do(cctx, s)
	if err == nil {
		return v, nil
	}
	if ctx.Err() != nil {
		return zero, errorf(CodeCancelled, server, "", ctx.Err(), "the %s request to %s was cancelled by its caller", what, server)
	}
	return zero, c.failure(s, cctx, what, err)
}

// PinReport is what Pin did.
type PinReport struct {
	Pinned []Tool         // each tool pinned; Pinned holds the sha256 it had before ("" for new)
	Failed []ServerStatus // servers that could not be reached: their pins are left as they were
}

// Pin connects to the servers of cfg (those named in servers, or all),
// pins the definition each tool has now, writes the pins file and
// disconnects: what `ewp-gateway pin --config FILE` does. ctx bounds the
// wait for the servers.
func Pin(ctx context.Context, cfg *config.Config, log *slog.Logger, servers ...string) (*PinReport, error) {
	opt := FromConfig(cfg)
	opt.PinOnFirstSight = false
	opt.Log = log
	if len(servers) > 0 {
		opt.Servers = nil
		for _, s := range cfg.Servers {
			for _, want := range servers {
				if s.Name == want {
					opt.Servers = append(opt.Servers, s)
				}
			}
		}
		if len(opt.Servers) != len(servers) {
			return nil, errorf(CodeUnavailable, "", "", nil, "pin: a server named is not in the config")
		}
	}
	r, err := New(opt)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Ready(ctx); err != nil {
		return nil, err
	}
	rep := &PinReport{}
	for _, st := range r.Servers() {
		if !st.Up {
			rep.Failed = append(rep.Failed, st)
		}
	}
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return rep, nil
	}
	rep.Pinned, err = r.Pin(names...)
	return rep, err
}
