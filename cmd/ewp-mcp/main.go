// Command ewp-mcp serves an EWP evidence ledger over MCP, on stdio or
// Streamable HTTP. Run it with --help for how to use it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/mcpwire"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/release"
	"github.com/ewp-go/ewp/store"
)

func main() {
	release.AnswerVersion("ewp-mcp")
	if os.Getenv("GOGC") == "" { // GOGC, when set, wins
		debug.SetGCPercent(mcp.GCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, openStore))
}

// opener opens the ledger; main passes openStore, tests a fake.
type opener func(path string, writable bool) (mcp.Store, io.Closer, error)

// shutdownGrace is how long in-flight HTTP requests get after a signal.
const shutdownGrace = 10 * time.Second

// run is the whole program; it returns the exit status. stdout carries
// only the MCP stream (stdio) or the help text; everything else goes to
// stderr.
func run(ctx context.Context, args []string, getenv func(string) string,
	stdin io.Reader, stdout, stderr io.Writer, open opener) int {
	if len(args) > 0 && args[0] == "config" {
		return runConfig(args[1:], getenv, stdout, stderr)
	}
	cfg, err := parseConfig(args, getenv)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ewp-mcp:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	for _, n := range cfg.notes {
		log.Warn(n)
	}
	if err := serve(ctx, cfg, stdin, stdout, stderr, log, open); err != nil {
		fmt.Fprintln(stderr, "ewp-mcp:", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger, open opener) error {
	var demo *demoRun
	if cfg.demo {
		var err error
		if demo, err = openDemo(ctx, &cfg); err != nil {
			return err
		}
		defer demo.cleanup()
		demo.note(stderr)
		log.Info("demo ledger built from the embedded examples", "db", cfg.db, "fresh", demo.fresh) // fresh=false: reused from --demo-dir
		log.Info("demo operator key: the console signs with it; ewp-audit approve --key uses it too", "key", demo.key)
	}
	if pg := store.IsPostgres(cfg.db); !cfg.writable() && !pg {
		if _, err := os.Stat(cfg.db); err != nil {
			return fmt.Errorf("ledger not found: %s (create it with ewp-ingest): %w", pgurl.Redact(cfg.db), err)
		}
	} else if pg {
		open = func(string, bool) (mcp.Store, io.Closer, error) { return openPostgres(ctx, cfg) }
	}
	store, closer, err := open(cfg.db, cfg.writable())
	if err != nil {
		return fmt.Errorf("open ledger %s: %w", pgurl.Redact(cfg.db), err)
	}
	defer closer.Close()
	opts := []mcp.Option{mcp.WithLogger(log), mcp.WithRequestTimeout(cfg.timeout),
		mcp.WithMaxRequestBytes(cfg.maxRequest), mcp.WithLimits(cfg.limits),
		mcp.WithMaxConcurrentCalls(cfg.maxCalls), mcp.WithToolNames(cfg.toolNames)}
	guard, policyHash, err := guardOption(ctx, cfg, store, log)
	if err != nil {
		return err
	}
	if guard != nil {
		opts = append(opts, guard)
	}
	decisions, dlog, closeLog, err := decisionLogOption(cfg, policyHash, log)
	if err != nil {
		return err
	}
	defer closeLog()
	if decisions != nil {
		opts = append(opts, decisions)
	}
	layers, err := policyLayerOptions(cfg, logOf(dlog), log)
	if err != nil {
		return err
	}
	opts = append(opts, layers...)
	srv := mcp.New(store, opts...)
	ready := func(string, bool) {}
	if demo != nil {
		if ready, err = demo.start(ctx, cfg, srv, stderr); err != nil {
			return err
		}
	}
	if cfg.httpAddr == "" {
		if ctx, err = stdioAgent(ctx, cfg, srv); err != nil {
			return err
		}
		log.Info("serving MCP on stdio", "db", pgurl.Redact(cfg.db), "ingest", cfg.allowIngest, "agent", identity.PrincipalFrom(ctx).Name)
		ready("", false)
		return srv.ServeStdio(ctx, stdin, stdout, cfg.allowIngest)
	}
	hooks := hookDeps{gate: srv.Gate(), dlog: dlog, log: log}
	return serveHTTP(ctx, cfg, store, srv, hooks, log, ready)
}

// serveHTTP serves until ctx ends; ready is called with the address
// listened on and whether the console is served, once both are known.
func serveHTTP(ctx context.Context, cfg config, store mcp.Store, srv *mcp.Server, hooks hookDeps, log *slog.Logger, ready func(addr string, console bool)) error {
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return err
	}
	addr := ln.Addr().String() // the real port when :0 was asked for
	auth, err := authenticator(ctx, cfg, srv.DecisionLogStore(), addr, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	h, err := srv.HTTPHandler(mcp.HTTPConfig{Addr: addr, AllowedHosts: cfg.allowHosts, Auth: auth})
	if err != nil {
		_ = ln.Close()
		return err
	}
	con, closeConsole, err := openConsole(cfg, store, srv, addr, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer closeConsole()
	h = routeConsole(h, con, cfg)
	hooks.auth = auth
	if h, err = routeHooks(ctx, h, cfg, hooks, addr, con != nil); err != nil {
		_ = ln.Close()
		return err
	}
	hs := mcp.NewHTTPServer(addr, h)
	hs.WriteTimeout = mcp.WriteTimeoutFor(srv.RequestTimeout())
	log.Info("serving MCP over HTTP", "url", "http://"+addr+mcp.EndpointPath, "db", pgurl.Redact(cfg.db), "ingest_token", cfg.token != "")
	if con != nil {
		log.Info("serving the operator console", "console", "http://"+addr+console.BasePath)
	} else {
		log.Info(consoleOffHint(cfg))
	}
	ready(addr, con != nil)
	return mcpwire.Serve(ctx, hs, ln, shutdownGrace, func() { log.Info("shutting down") })
}
