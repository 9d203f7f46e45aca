// Command loadtest measures warrant_now over Streamable HTTP against a
// ledger of many propositions (100,000 by default) under several loads,
// and prints calls/s, latency quantiles and CPU per call for each.
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
// error, an ACCEPTED warrant, and (for the first responses of each client)
// the proposition that was asked for. Each client has its own keep-alive
// connection; -client picks the HTTP client (a minimal one by default, or
// net/http's, see client.go).
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
}

func main() {
	cfg, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func parseFlags() (config, error) {
	var cfg config
	var clients string
	flag.IntVar(&cfg.props, "props", 100_000, "propositions in the ledger")
	flag.StringVar(&clients, "clients", "1,8,64,64@11000",
		"comma-separated loads: N clients calling as fast as they are answered, or N@R for N clients sending R calls/s together at random instants")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time per load")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured time before each measurement")
	flag.StringVar(&cfg.dir, "dir", "", "cache directory for the ledger and the binary (default $EWP_BENCH_DIR, else a temp dir)")
	flag.StringVar(&cfg.server, "server", "", "ewp-mcp binary to run (default: go build ./cmd/ewp-mcp into -dir)")
	flag.Func("server-env", "KEY=VALUE added to the ewp-mcp process's environment, e.g. GOGC=400 (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		cfg.serverEnv = append(cfg.serverEnv, v)
		return nil
	})
	flag.BoolVar(&cfg.inprocess, "inprocess", false, "serve from this process instead of an ewp-mcp process")
	flag.BoolVar(&cfg.serve, "serve", false, "only serve the ledger from this process until interrupted (see -url)")
	flag.StringVar(&cfg.url, "url", "", "drive this running server (e.g. a -serve process) instead of starting one; "+
		"several comma-separated URLs (replicas) share the clients round-robin")
	flag.StringVar(&cfg.pid, "pid", "", "with -url: the server's process id, for its CPU time; comma-separated for several (their CPU is summed)")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (use with -inprocess or -serve for the server)")
	flag.BoolVar(&cfg.jsonOut, "json", false, "print the results as JSON")
	flag.StringVar(&cfg.client, "client", "raw", `HTTP client: "raw" (one keep-alive connection per client, little CPU) or "net/http"`)
	flag.BoolVar(&cfg.baseline, "baseline", false, "drive a bare net/http server that re-sends one real answer instead of ewp-mcp: the floor of this harness on this machine")
	flag.BoolVar(&cfg.arrival, "arrival", false, "also report when answers reach the client's socket (Linux receive timestamps): the latency without the client's own wait for a core")
	flag.Parse()
	var err error
	if cfg.loads, err = parseLoads(clients); err != nil {
		return cfg, err
	}
	if cfg.props < 1 {
		return cfg, errors.New("-props must be at least 1")
	}
	if cfg.dir == "" {
		cfg.dir = os.Getenv("EWP_BENCH_DIR")
	}
	if cfg.dir == "" {
		cfg.dir = filepath.Join(os.TempDir(), "ewp-bench")
	}
	return cfg, os.MkdirAll(cfg.dir, 0o755)
}

func run(cfg config) error {
	srv, err := startServer(cfg)
	if err != nil {
		return err
	}
	defer srv.stop()
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.serve {
		// On stderr, where -baseline's parent and ewp-mcp's log look for url=.
		fmt.Fprintf(os.Stderr, "serving url=%s (pid %d); interrupt to stop\n", srv.url, os.Getpid())
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		return nil
	}
	log := os.Stderr
	fmt.Fprintf(log, "server %s at %s, %d propositions, GOMAXPROCS %d, %d CPUs\n",
		srv.kind, srv.url, cfg.props, runtime.GOMAXPROCS(0), runtime.NumCPU())
	var results []result
	for _, ld := range cfg.loads {
		r, err := measure(srv, cfg, ld)
		if err != nil {
			return err
		}
		results = append(results, r)
		if !cfg.jsonOut {
			fmt.Println(r)
		}
	}
	if cfg.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return nil
}
