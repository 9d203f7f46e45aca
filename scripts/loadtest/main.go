// Command loadtest measures warrant_now (or, with -tool may_act, a
// warrant-only may_act) over Streamable HTTP against a ledger of many
// propositions (100,000 by default) under several loads, and prints
// calls/s, latency quantiles and CPU per call for each.
//
// A load is either N clients calling as fast as the server answers (a
// closed loop: the most calls/s, with N calls always out), or N@R:
// N clients sending R calls/s together at random (Poisson) instants, each
// call's latency counted from the instant it was due, so a server that
// falls behind is charged for the calls it delayed (an open loop: the
// latency at that throughput).
//
// It is a benchmark, not a test: CI never runs it. Run it from the module:
//
//	go run ./scripts/loadtest                      # 1, 8, 64 clients, then 64 at 11,000 calls/s; 10 s each
//	go run ./scripts/loadtest -clients 64 -duration 30s
//	go run ./scripts/loadtest -clients 64@5000,64@15000
//	go run ./scripts/loadtest -inprocess -cpuprofile /tmp/server.prof
//
// -compare-audit measures what recording may_act's decisions costs (issue
// #12: with the decision log on, at least 80% of the calls/s without it
// at 64 clients): each load runs with the log off and on, alternating,
// -rounds times, each on a server started for it, and the median ratio
// of calls/s on/off is the figure to quote:
//
//	go run ./scripts/loadtest -tool may_act -compare-audit -clients 64 -rounds 5
//
// -audit on (the default) runs ewp-mcp with its default decision log
// beside the ledger (<ledger>.audit), deleted before every server starts
// so that each load begins with an empty log; -audit off runs it with
// --audit off. With -inprocess the same choice applies to the in-process
// server (an SQLite log through mcp.WithDecisionLog, or none). The ledger
// is opened read-only either way (ewp-mcp gets no ingest token), and the
// run fails if it was written.
//
// To profile the server alone while it shares the machine with its client,
// serve from one process and drive it from another:
//
//	go run ./scripts/loadtest -serve -cpuprofile /tmp/server.prof   # prints URL and pid
//	go run ./scripts/loadtest -url URL -pid PID -clients 64
//
// The ledger is built once (synthetic views from snapshottest) and cached
// as ledger-<props>.sqlite in $EWP_BENCH_DIR, or in a directory under the
// system temp dir when that is unset, and read through before measuring
// so that it starts in the page cache; a line that waited on the disk
// anyway says so (DISK: major page faults). By default the server is the real
// ewp-mcp binary (built into the same directory, or -server PATH) running
// in its own process; client and server then share the machine's cores,
// as they would on one host. -inprocess serves from this process instead,
// so -cpuprofile captures the server's request path (and the client's,
// which pprof's -focus separates).
//
// Every response is checked: status 200, a tool result that is not an
// error, an ACCEPTED warrant (may_act: MAY_ACT in the result and every
// layer, and a decision_id exactly when the log is on), and (for the
// first responses of each client) the proposition that was asked for.
// Each client has its own keep-alive connection; -client picks the HTTP
// client (a minimal one by default, or net/http's, see client.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
)

// evaluatedAt is inside the synthetic views' freshness window, so the
// answers are ACCEPTED views with real work behind them.
const evaluatedAt = "2026-09-21T12:00:00Z"

type config struct {
	props      int
	loads      []load
	duration   time.Duration
	warmup     time.Duration
	dir        string
	server     string
	serverEnv  []string
	inprocess  bool
	serve      bool
	url        string
	pid        string // with -url: the server process ids, comma-separated
	cpuprofile string
	jsonOut    bool
	client     string
	arrival    bool
	baseline   bool
	tool       string // toolWarrantNow or toolMayAct
	// audit: the server keeps a decision log (-audit on): ewp-mcp's
	// default log beside the ledger, started empty for every load, or in
	// process the same SQLite log. With -url, what that server does.
	audit        bool
	compareAudit bool
	rounds       int
	// interleave, with compareAudit: run both servers at once and switch
	// the clients between them every interleave (0: separate runs).
	interleave time.Duration
	// compareServer, with interleave: an earlier ewp-mcp binary run beside
	// the one measured, both with the same -audit, to compare two builds.
	compareServer string
}

// call is what the clients ask, and the answer they expect.
func (cfg config) call() call { return call{tool: cfg.tool, logged: cfg.audit} }

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// parseArgs reads the command line and makes the cache directory.
func parseArgs(args []string) (config, error) {
	var cfg config
	var clients, audit string
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.IntVar(&cfg.props, "props", 100_000, "propositions in the ledger")
	fs.StringVar(&clients, "clients", "1,8,64,64@11000",
		"comma-separated loads: N clients calling as fast as they are answered, or N@R for N clients sending R calls/s together at random instants")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time per load")
	fs.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured time before each measurement")
	fs.StringVar(&cfg.dir, "dir", "", "cache directory for the ledger and the binary (default $EWP_BENCH_DIR, else a temp dir)")
	fs.StringVar(&cfg.server, "server", "", "ewp-mcp binary to run (default: go build ./cmd/ewp-mcp into -dir)")
	fs.Func("server-env", "KEY=VALUE added to the ewp-mcp process's environment, e.g. GOGC=400 (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		cfg.serverEnv = append(cfg.serverEnv, v)
		return nil
	})
	fs.BoolVar(&cfg.inprocess, "inprocess", false, "serve from this process instead of an ewp-mcp process")
	fs.BoolVar(&cfg.serve, "serve", false, "only serve the ledger from this process until interrupted (see -url)")
	fs.StringVar(&cfg.url, "url", "", "drive this running server (e.g. a -serve process) instead of starting one; "+
		"several comma-separated URLs (replicas) share the clients round-robin")
	fs.StringVar(&cfg.pid, "pid", "", "with -url: the server's process id, for its CPU time; comma-separated for several (their CPU is summed)")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (use with -inprocess or -serve for the server)")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the results as JSON")
	fs.StringVar(&cfg.client, "client", "raw", `HTTP client: "raw" (one keep-alive connection per client, little CPU) or "net/http"`)
	fs.BoolVar(&cfg.baseline, "baseline", false, "drive a bare net/http server that re-sends one real answer instead of ewp-mcp: the floor of this harness on this machine")
	fs.BoolVar(&cfg.arrival, "arrival", false, "also report when answers reach the client's socket (Linux receive timestamps): the latency without the client's own wait for a core")
	fs.StringVar(&cfg.tool, "tool", toolWarrantNow, `the tool every call asks: "warrant_now", or "may_act" (a warrant-only may_act, answered MAY_ACT)`)
	fs.StringVar(&audit, "audit", "on", `"on": the server records decisions in a decision log, fresh and empty for each load (ewp-mcp's default log beside the ledger); `+
		`"off": ewp-mcp --audit off. With -url: what that server does, which may_act's answers are checked against`)
	fs.BoolVar(&cfg.compareAudit, "compare-audit", false, "run each load with the decision log off and on, -rounds times alternating, "+
		"and print calls/s and server CPU per call of each, the ratio on/off, and its median")
	fs.IntVar(&cfg.rounds, "rounds", 3, "with -compare-audit: the rounds of off and on per load")
	fs.DurationVar(&cfg.interleave, "interleave", 0, "with -compare-audit: run both servers at once and switch the clients between them every interleave "+
		"(e.g. 500ms) for -duration, instead of -rounds separate runs: a steadier ratio on a machine whose speed drifts")
	fs.StringVar(&cfg.compareServer, "compare-server", "", "with -interleave: an earlier ewp-mcp binary to run beside the one measured (-server, "+
		"or a fresh build), both with the same -audit and -tool; the clients switch between them and the line gives new/old")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q: every setting is a flag (-h lists them)", fs.Args())
	}
	if err := cfg.setAudit(audit); err != nil {
		return cfg, err
	}
	var err error
	if cfg.loads, err = parseLoads(clients); err != nil {
		return cfg, err
	}
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	if cfg.dir == "" {
		cfg.dir = os.Getenv("EWP_BENCH_DIR")
	}
	if cfg.dir == "" {
		cfg.dir = filepath.Join(os.TempDir(), "ewp-bench")
	}
	return cfg, os.MkdirAll(cfg.dir, 0o755)
}

func (cfg *config) setAudit(v string) error {
	switch v {
	case "on":
		cfg.audit = true
	case "off":
		cfg.audit = false
	default:
		return fmt.Errorf(`-audit %q: want "on" (a decision log) or "off" (none)`, v)
	}
	return nil
}

// validate refuses settings that cannot work together.
func (cfg config) validate() error {
	switch {
	case cfg.props < 1:
		return errors.New("-props must be at least 1")
	case cfg.tool != toolWarrantNow && cfg.tool != toolMayAct:
		return fmt.Errorf(`-tool %q: want "warrant_now" or "may_act"`, cfg.tool)
	case cfg.baseline && cfg.tool != toolWarrantNow:
		return errors.New("-baseline re-sends a warrant_now answer: use it with -tool warrant_now")
	case cfg.rounds < 1:
		return errors.New("-rounds must be at least 1")
	case cfg.interleave < 0:
		return errors.New("-interleave must not be negative")
	case cfg.interleave > 0 && !cfg.compareAudit && cfg.compareServer == "":
		return errors.New("-interleave switches between two servers: add -compare-audit -tool may_act, or -compare-server OLD")
	case cfg.compareServer != "" && (cfg.interleave == 0 || cfg.compareAudit):
		return errors.New("-compare-server runs the two builds interleaved with the same log setting: add -interleave 500ms, and drop -compare-audit")
	case cfg.compareServer != "" && (cfg.url != "" || cfg.serve || cfg.baseline):
		return errors.New("-compare-server starts its own two servers: it cannot be used with -url, -serve or -baseline")
	case cfg.interleave > 0 && cfg.inprocess:
		return errors.New("-interleave runs two ewp-mcp processes, so each one's CPU is its own: drop -inprocess")
	case cfg.interleave > 0 && cfg.duration < 2*cfg.interleave:
		return errors.New("-interleave needs a -duration of at least two slices")
	case cfg.interleave > 0 && slices.ContainsFunc(cfg.loads, func(l load) bool { return l.rate > 0 }):
		return errors.New("-interleave measures closed loops (N clients as fast as answered): drop the @R loads")
	case !cfg.compareAudit:
		return nil
	case cfg.tool != toolMayAct:
		return errors.New("-compare-audit measures the cost of recording may_act's decisions: add -tool may_act (warrant_now is never recorded)")
	case cfg.url != "" || cfg.serve || cfg.baseline:
		return errors.New("-compare-audit starts its own servers, with the log off and on: it cannot be used with -url, -serve or -baseline")
	}
	return nil
}

func run(cfg config) error {
	ln, err := newLauncher(cfg)
	if err != nil {
		return err
	}
	if cfg.compareAudit || cfg.compareServer != "" {
		stopProfile, err := startProfile(cfg.cpuprofile)
		if err != nil {
			return err
		}
		if cfg.interleave > 0 {
			err = compareInterleaved(ln, cfg)
		} else {
			err = compareAudit(ln, cfg)
		}
		stopProfile()
		return errors.Join(err, ln.ledgerUnchanged())
	}
	srv, err := ln.start(cfg.audit)
	if err != nil {
		return err
	}
	stopProfile, err := startProfile(cfg.cpuprofile)
	if err != nil {
		srv.stop()
		return err
	}
	var results []result
	if cfg.serve {
		serve(srv)
	} else {
		results, err = measureAll(srv, cfg)
	}
	stopProfile()
	srv.stop()
	if err = errors.Join(err, ln.ledgerUnchanged()); err != nil || !cfg.jsonOut {
		return err
	}
	return printJSON(results)
}

// startProfile starts the -cpuprofile, if any; the function it returns
// stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// serve serves until interrupted (-serve).
func serve(srv *server) {
	// On stderr, where -baseline's parent and ewp-mcp's log look for url=.
	fmt.Fprintf(os.Stderr, "serving url=%s (pid %d); interrupt to stop\n", srv.url, os.Getpid())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}

// measureAll measures every load on srv, printing each line as it is
// measured unless the results are wanted as JSON.
func measureAll(srv *server, cfg config) ([]result, error) {
	logServer(srv, cfg)
	var results []result
	for _, ld := range cfg.loads {
		r, err := measure(srv, cfg, ld)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
		if !cfg.jsonOut {
			fmt.Println(r)
		}
	}
	return results, nil
}

// logServer says on stderr what is measured: which server, tool and log.
func logServer(srv *server, cfg config) {
	log := "decision log " + onOff(cfg.audit)
	if cfg.baseline {
		log = "no decision log (baseline)"
	}
	fmt.Fprintf(os.Stderr, "server %s at %s, %d propositions, %s, %s, GOMAXPROCS %d, %d CPUs\n",
		srv.kind, srv.url, cfg.props, cfg.tool, log, runtime.GOMAXPROCS(0), runtime.NumCPU())
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
