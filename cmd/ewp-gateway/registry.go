package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/gateway/downstream"
	"github.com/ewp-go/ewp/gateway/front"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/warrant"
	"github.com/mark3labs/mcp-go/mcp"
)

// readyWait bounds the wait for every downstream's first attempt at start:
// a server still starting after it is served once it is up.
const readyWait = 30 * time.Second

// registry is the downstream registry as the front asks it.
type registry struct{ r *downstream.Registry }

// openRegistry starts every downstream server the config names and waits
// (readyWait at most) until each was tried once. onList is called when
// the tools listed may have changed.
//
// rec, when not nil, records each definition the pins do not allow (a
// changed one, one never pinned) in the decision log, as a refusal of
// the tool by the gateway itself: the log says when a server changed a
// definition, not only that its calls were refused after.
func openRegistry(ctx context.Context, cfg *config.Config, log *slog.Logger, rec *gate.Gate, onList func()) (registry, error) {
	opt := downstream.FromConfig(cfg)
	opt.Log = log
	opt.OnListChanged = onList
	if rec != nil {
		opt.OnChange = func(c downstream.Change) { recordChange(rec, c, log) }
	}
	r, err := downstream.New(opt)
	if err != nil {
		return registry{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	if err := r.Ready(wctx); err != nil && ctx.Err() != nil {
		_ = r.Close()
		return registry{}, err
	}
	return registry{r}, nil
}

func (g registry) Close() error { return g.r.Close() }

// Tools is every downstream tool, a withheld one with its reason.
func (g registry) Tools() []front.Tool {
	all := g.r.Tools()
	out := make([]front.Tool, 0, len(all))
	for _, t := range all {
		ft := front.Tool{Server: t.Server, Def: t.Definition}
		switch t.State {
		case downstream.Changed:
			ft.WithheldCode = downstream.CodeToolChanged
			ft.Withheld = "its definition changed since the operator pinned it (sha256 " + t.SHA256 + ", pinned " + t.Pinned +
				"); it is withheld until the operator pins it again (ewp-gateway pin)"
		case downstream.Unpinned:
			ft.WithheldCode = downstream.CodeToolUnpinned
			ft.Withheld = "the operator has not pinned its definition; it is withheld until they do (ewp-gateway pin)"
		}
		out = append(out, ft)
	}
	return out
}

func (g registry) Call(ctx context.Context, server, tool string, args json.RawMessage, progress func(front.Progress)) (*mcp.CallToolResult, error) {
	var pf downstream.ProgressFunc
	if progress != nil {
		pf = func(p downstream.Progress) {
			progress(front.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	return g.r.Call(ctx, front.Exposed(server, tool), args, pf)
}

// pin connects to the servers (those named, or all), pins every tool
// each offers now and reports what it did; a server that cannot be
// reached keeps its pins as they were, and makes the exit status 1.
func pin(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	cfg, err := config.Load(o.config)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	rep, err := downstream.Pin(wctx, cfg, log, o.servers...)
	if err != nil {
		return err
	}
	for _, t := range rep.Pinned {
		was := "new"
		switch {
		case t.Pinned == t.SHA256:
			was = "unchanged"
		case t.Pinned != "":
			was = "was " + t.Pinned
		}
		fmt.Fprintf(stdout, "pinned %s sha256 %s (%s)\n", termtext.Escape(t.Name), t.SHA256, was)
	}
	fmt.Fprintf(stdout, "%d tool definition(s) pinned in %s\n", len(rep.Pinned), cfg.Pins)
	if len(rep.Failed) > 0 {
		for _, s := range rep.Failed {
			fmt.Fprintf(stdout, "not reached: server %s (%s): its pins are left as they were\n", s.Name, termtext.Escape(fmt.Sprint(s.Err)))
		}
		return fmt.Errorf("%d server(s) could not be reached; fix them and pin again", len(rep.Failed))
	}
	return nil
}

// recordChange records a definition the pins did not allow.
func recordChange(g *gate.Gate, c downstream.Change, log *slog.Logger) {
	code, why := downstream.CodeToolUnpinned, "seen, never pinned: withheld until the operator pins it"
	switch c.Kind {
	case downstream.ToolFirstSeen:
		return // pinned as seen, as the config asks: nothing is withheld
	case downstream.ToolChanged:
		code, why = downstream.CodeToolChanged, "its definition changed since it was pinned (sha256 "+c.Tool.SHA256+
			", pinned "+c.Was+"): withheld until the operator pins it again"
	}
	server, tool, _ := front.Split(c.Tool.Name)
	r := gate.Request{Caller: audit.Caller{Transport: "inprocess"},
		Call: &gate.ToolCall{Entrance: front.Entrance, Name: front.ManifestName(server, tool)}}
	err := g.Refuse(context.Background(), audit.ToolCall, r, &warrant.Error{Code: code, Field: "/tools/" + c.Tool.Name, Rule: why})
	var rec *gate.RecordedError
	if errors.As(err, &rec) {
		log.Warn("tool withheld, on record", "tool", c.Tool.Name, "code", code, "decision_id", rec.ID)
	}
}

// Passing is which servers pass resources and prompts through.
func (g registry) Passing() (resources, prompts []string) {
	for _, s := range g.r.Servers() {
		if s.Resources {
			resources = append(resources, s.Name)
		}
		if s.Prompts {
			prompts = append(prompts, s.Name)
		}
	}
	return resources, prompts
}

func (g registry) ListResources(ctx context.Context, server string) ([]mcp.Resource, error) {
	return g.r.ListResources(ctx, server)
}

func (g registry) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	return g.r.ReadResource(ctx, server, uri)
}

func (g registry) ListPrompts(ctx context.Context, server string) ([]mcp.Prompt, error) {
	return g.r.ListPrompts(ctx, server)
}

func (g registry) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return g.r.GetPrompt(ctx, server, name, args)
}
