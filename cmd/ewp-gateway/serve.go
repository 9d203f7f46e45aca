package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/gateway/front"
	"github.com/ewp-go/ewp/hook"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/mcpwire"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/warrant"
)

// endpointPath is where the MCP endpoint is served over HTTP.
const endpointPath = "/mcp"

// shutdownGrace is how long in-flight HTTP requests get after a signal.
const shutdownGrace = 10 * time.Second

// serve runs the gateway until ctx ends (or stdin closes, over stdio).
func serve(ctx context.Context, o options, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	cfg, err := config.Load(o.config)
	if err != nil {
		return err
	}
	m, err := manifest.Parse(cfg.Manifest)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Path, err)
	}
	b, err := openBackend(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer b.close()
	// The registry may call back before the front exists, and from its
	// own goroutines.
	var fp atomic.Pointer[front.Front]
	reg, err := openRegistry(ctx, cfg, log, b.gate, func() {
		if f := fp.Load(); f != nil {
			f.Sync()
			// Off the registry's goroutine: listing asks the servers.
			go f.SyncPassthrough(ctx)
		}
	})
	if err != nil {
		return err
	}
	defer reg.Close()
	f := front.New(front.Config{Name: "ewp-gateway", Version: warrant.ProtocolVersion, Gate: b.gate,
		Manifest: manifestOf{m}, Downstreams: reg, Log: log, Principal: identity.PrincipalFrom,
		Approve:         front.Approve{ConsoleURL: cfg.ConsoleURL, Command: approveCommand(cfg)},
		MaxMessageBytes: o.maxRequest, RaiseHint: raiseHint})
	defer f.Close() // before the registry and the log close: every result recorded
	fp.Store(f)
	f.Sync() // anything the registry saw while the front was made
	f.SyncPassthrough(ctx)
	if o.httpAddr == "" {
		agent, err := stdioAgent(ctx, o.agent, b.log)
		if err != nil {
			return err
		}
		name := ""
		if agent != nil {
			name = agent.Name
		}
		log.Info("serving the gateway on stdio", "config", cfg.Path, "servers", len(cfg.Servers), "agent", name)
		return f.ServeStdio(ctx, stdin, stdout, func(ctx context.Context) context.Context {
			if agent == nil {
				return ctx
			}
			return identity.WithStdioAgent(ctx, identity.AgentsOf(b.log), agent)
		})
	}
	hooks := func(mux *http.ServeMux, auth *identity.Authenticator) {
		judge := &hook.GateJudge{Gate: b.gate, Describe: hook.ManifestDescribe(m), Log: b.log}
		where := hook.Where{ConsoleURL: cfg.ConsoleURL}
		if cmd := approveCommand(cfg); cmd != "" {
			where.DB = strings.TrimSuffix(strings.TrimPrefix(cmd, "ewp-audit approve "), " --once")
		}
		(&hook.Server{Judge: judge, Auth: hook.IdentityAuth(auth), Where: where, Log: log}).Route(mux)
	}
	return serveHTTP(ctx, o, f, b.log, hooks, writeTimeout(cfg), log)
}

// raiseHint ends the refusal of a message over --max-request-bytes, on
// either transport.
const raiseHint = "the operator raises the limit with ewp-gateway --max-request-bytes"

// approveCommand is the command line that approves a pending decision
// once, naming the log the gateway records in.
func approveCommand(cfg *config.Config) string {
	if cfg.Audit == "" {
		return ""
	}
	def := auditsqlite.DefaultPath(cfg.DB)
	if auditstore.IsPostgres(cfg.DB) {
		def = cfg.DB
	}
	if cfg.Audit == def {
		return "ewp-audit approve --db " + pgurl.Redact(cfg.DB) + " --once"
	}
	return "ewp-audit approve --audit " + pgurl.Redact(cfg.Audit) + " --once"
}

// writeTimeout outlasts the longest call a downstream may take, so an
// answer still allowed to come is never cut off by the connection first.
func writeTimeout(cfg *config.Config) time.Duration {
	d := config.DefaultTimeout
	for _, s := range cfg.Servers {
		d = max(d, s.Timeout)
	}
	return d + 10*time.Second
}

// stdioAgent is --agent's agent, live in the log's register at start
// (each call looks it up again: identity.Recheck); nil without --agent.
func stdioAgent(ctx context.Context, name string, l audit.Log) (*audit.AgentRecord, error) {
	if name == "" {
		return nil, nil
	}
	if l == nil {
		return nil, errors.New(`--agent names an agent of the decision log's register; it needs the decision log ("audit" is "off")`)
	}
	rec, err := identity.AgentNamed(ctx, identity.AgentsOf(l), name)
	if err != nil {
		return nil, fmt.Errorf("--agent: %w", err)
	}
	return rec, nil
}

// authenticated serves next with the caller's principal on the request's
// context, answering the 401 challenge itself.
func authenticated(next http.Handler, a *identity.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := a.Authenticate(r)
		if err != nil {
			a.Challenge(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), id.Principal)))
	})
}

// withMetadata answers the protected resource metadata, and sends
// everything else to next.
func withMetadata(next http.Handler, a *identity.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.IsMetadataPath(r.URL.Path) {
			a.ServeMetadata(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveHTTP serves the MCP endpoint and, through hooks, the client hook
// endpoints (POST /hooks/claude-code, /hooks/tool-call: Claude Code's
// hooks and the OpenClaw plugin, judged by the same gate and manifest),
// all behind the Host/Origin check and the body limit.
func serveHTTP(ctx context.Context, o options, f *front.Front, l audit.Log, hooks func(*http.ServeMux, *identity.Authenticator),
	wt time.Duration, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return err
	}
	addr := ln.Addr().String() // the real port when :0 was asked for
	hosts, err := mcpwire.NewHosts(addr, o.allowHosts...)
	if err != nil {
		_ = ln.Close()
		return err
	}
	ic := identity.Config{Agents: identity.AgentsOf(l), Required: o.requireCredential, Resource: "http://" + addr + endpointPath}
	o.oauth.Apply(&ic)
	auth, err := identity.New(ctx, ic)
	if err != nil {
		_ = ln.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(endpointPath, authenticated(f.HTTPHandler(endpointPath, func(ctx context.Context, r *http.Request) context.Context {
		return identity.WithPrincipal(ctx, identity.PrincipalFrom(r.Context()))
	}), auth))
	hooks(mux, auth)
	h := mcpwire.Guard(withMetadata(mux, auth), hosts, o.maxRequest, raiseHint)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: wt,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}
	log.Info("serving the gateway over HTTP", "url", "http://"+addr+endpointPath,
		"claude_code_hook", "http://"+addr+hook.PathClaudeCode, "tool_call_hook", "http://"+addr+hook.PathToolCall,
		"agent_credentials", identity.AgentsOf(l) != nil, "oauth", ic.OAuth != nil, "required", auth.Required(),
		"resource_metadata", auth.MetadataURL())
	return mcpwire.Serve(ctx, hs, ln, shutdownGrace, func() { log.Info("shutting down") })
}
