package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/gate"
	clienthook "github.com/ewp-go/ewp/hook"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/mcp"
)

// hookDeps are what the hook endpoints' gate is built from: the same
// ledger, decision log, operator keys and policies as the MCP tools'.
type hookDeps struct {
	store      mcp.Store
	dlog       *mcp.DecisionLog // nil with --audit off
	policyHash string
	log        *slog.Logger
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
	g, err := hookGate(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	var agents audit.Agents
	judge := &clienthook.GateJudge{Gate: g, Describe: clienthook.ManifestDescribe(m)}
	if d.dlog != nil {
		judge.Log = d.dlog.Log
		agents, _ = d.dlog.Log.(audit.Agents)
	}
	auth, err := identity.New(ctx, identity.Config{Agents: agents, IngestToken: cfg.token})
	if err != nil {
		return nil, err
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
	mux := http.NewServeMux()
	(&clienthook.Server{Judge: judge, Auth: clienthook.IdentityAuth(auth), Where: where, Log: d.log}).Route(mux)
	mux.Handle("/", h)
	d.log.Info("serving the client hook endpoints", "claude_code", "http://"+addr+clienthook.PathClaudeCode,
		"tool_call", "http://"+addr+clienthook.PathToolCall, "tools", cfg.tools)
	return mux, nil
}

// loadManifest reads and parses the --tools file.
func loadManifest(path string) (*manifest.Manifest, error) {
	raw, err := readCapped(path, maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("--tools: %w", err)
	}
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--tools %s: %w", path, err)
	}
	return m, nil
}

// hookGate is a gate over the server's ledger, decision log and guard.
func hookGate(ctx context.Context, cfg config, d hookDeps) (*gate.Gate, error) {
	gc := gate.Config{Ledger: d.store, Timeout: cfg.timeout, PolicySetHash: d.policyHash, Logger: d.log}
	if d.dlog != nil {
		gc.Log, gc.OperatorKeys = d.dlog.Log, d.dlog.OperatorKeys
		gc.MaxApprovalLifetime, gc.ReplayWindow, gc.RedactArguments = d.dlog.MaxApprovalLifetime, d.dlog.ReplayWindow, d.dlog.RedactArguments
		gc.Unavailable = d.dlog.Unavailable
	}
	if gr, ok := d.store.(grapher); ok {
		policies, _, err := loadPolicies(cfg)
		if err != nil {
			return nil, err
		}
		gc.Guard = gate.NewGuard(gr.graph(), policies, func() *slog.Logger { return d.log })
		gc.Layers = gc.Guard.Layers()
	}
	return gate.New(gc)
}

// readCapped reads at most limit bytes of path, refusing a larger file.
func readCapped(path string, limit int64) ([]byte, error) {
	b, err := readFileLimit(path, limit+1)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New(path + " is over the limit of " + strconv.FormatInt(limit, 10) + " bytes")
	}
	return b, nil
}

func readFileLimit(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
