package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/gate"
	clienthook "github.com/ewp-go/ewp/hook"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/mcpwire"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/mcp"
)

// hookDeps are what the hook endpoints are built from: the MCP server's
// own gate (so a hook's call is judged by the same layers and recorded in
// the same log as a tool's), its decision log and its authenticator.
type hookDeps struct {
	gate *gate.Gate
	dlog *mcp.DecisionLog // nil with --audit off
	auth *identity.Authenticator
	log  *slog.Logger
}

// maxManifestBytes bounds the --tools file.
const maxManifestBytes = 4 << 20

// routeHooks serves the client hook endpoints beside h when --tools names
// a manifest; otherwise h as it is.
func routeHooks(ctx context.Context, h http.Handler, cfg config, d hookDeps, addr string, consoleOn bool) (http.Handler, error) {
	if cfg.tools == "" {
		return h, nil
	}
	m, err := loadManifest(cfg.tools)
	if err != nil {
		return nil, err
	}
	judge := &clienthook.GateJudge{Gate: d.gate, Describe: clienthook.ManifestDescribe(m)}
	if d.dlog != nil {
		judge.Log = d.dlog.Log
	}
	where := clienthook.Where{}
	switch path := auditPath(cfg); {
	case cfg.audit != "" && path != "":
		where.DB = "--audit " + pgurl.Redact(path)
	case path != "":
		where.DB = "--db " + pgurl.Redact(cfg.db)
	}
	if consoleOn {
		where.ConsoleURL = "http://" + addr + console.BasePath
	}
	hosts, err := mcpwire.NewHosts(addr, cfg.allowHosts...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	(&clienthook.Server{Judge: judge, Auth: clienthook.IdentityAuth(d.auth), Where: where, Log: d.log,
		Hosts: hosts}).Route(mux)
	mux.Handle("/", h)
	d.log.Info("serving the client hook endpoints", "claude_code", "http://"+addr+clienthook.PathClaudeCode,
		"tool_call", "http://"+addr+clienthook.PathToolCall, "tools", cfg.tools)
	return mux, nil
}

// loadManifest reads and parses the --tools file.
func loadManifest(path string) (*manifest.Manifest, error) {
	raw, _, err := opfile.Read(path, maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("--tools: %w", err)
	}
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--tools %s: %w", path, err)
	}
	return m, nil
}
