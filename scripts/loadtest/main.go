// Command loadtest measures warrant_now over Streamable HTTP against a
// ledger of many propositions (100,000 by default) at several client
// concurrencies, and prints calls/s, p50 and p99 for each.
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
//	go run ./scripts/loadtest -clients 64@5000,64@20000
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
// system temp dir when that is unset. By default the server is the real
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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
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
	pid        int
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
	flag.StringVar(&cfg.url, "url", "", "drive this running server (e.g. a -serve process) instead of starting one")
	flag.IntVar(&cfg.pid, "pid", 0, "with -url: the server's process id, for its CPU time")
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

// cachedLedger returns the path of a ledger of props synthetic
// propositions (one snapshot each), building it on first use. It is built
// under a temporary name and renamed, so an interrupted build is never
// mistaken for a cached one.
func cachedLedger(dir string, props int) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("ledger-%d.sqlite", props))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(tmp + suffix)
	}
	fmt.Fprintf(os.Stderr, "building %s (once)...\n", path)
	start := time.Now()
	l, err := ledger.Create(tmp, ledger.Options{})
	if err != nil {
		return "", err
	}
	res, err := l.PutEach(context.Background(), props, func(i int) (*warrant.View, error) {
		return warrant.DecodeView(snapshottest.SyntheticView(i, 0))
	})
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("building the ledger: %w", err)
	}
	if res.Stored != props {
		return "", fmt.Errorf("building the ledger: stored %d of %d views", res.Stored, props)
	}
	// The WAL is normally checkpointed away on close; if not, it moves too.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(tmp+suffix, path+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "built in %v\n", time.Since(start).Round(time.Millisecond))
	return path, nil
}

// readThrough reads the ledger once, so that the measurements start with
// it in the page cache, as it is in a server that has been serving, and
// not with pages the machine paged out while the ledger sat idle (see
// usage.go).
func readThrough(db string) error {
	for _, path := range []string{db, db + "-wal"} {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return nil
}

type server struct {
	kind   string
	url    string
	inproc bool // served from this process
	pid    int  // the server's process, 0 when unknown or in-process
	stop   func()
}

func startServer(cfg config) (*server, error) {
	if cfg.url != "" {
		return &server{kind: "external", url: cfg.url, pid: cfg.pid, stop: func() {}}, nil
	}
	db, err := cachedLedger(cfg.dir, cfg.props)
	if err != nil {
		return nil, err
	}
	if err := readThrough(db); err != nil {
		return nil, err
	}
	if cfg.baseline {
		if cfg.inprocess || cfg.serve {
			return startBaseline(db)
		}
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		srv, err := startProcess(self, []string{"-serve", "-baseline", "-props", strconv.Itoa(cfg.props), "-dir", cfg.dir}, cfg.serverEnv)
		if err == nil {
			srv.kind = "baseline (bare net/http) process"
		}
		return srv, err
	}
	if cfg.inprocess || cfg.serve {
		return startInProcess(db)
	}
	bin := cfg.server
	if bin == "" {
		bin = filepath.Join(cfg.dir, "ewp-mcp")
		build := exec.Command("go", "build", "-o", bin, "github.com/ewp-go/ewp/cmd/ewp-mcp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("go build ewp-mcp: %w", err)
		}
	}
	return startProcess(bin, []string{"--db", db, "--http", "127.0.0.1:0"}, cfg.serverEnv)
}

var servingURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// startProcess runs a server (`ewp-mcp --db DB --http 127.0.0.1:0`, or
// this command serving the baseline) and reads the address it chose from
// its log.
func startProcess(bin string, args, env []string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			} else if strings.Contains(sc.Text(), "level=ERROR") {
				fmt.Fprintln(os.Stderr, "server:", sc.Text())
			}
		}
	}()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	select {
	case url := <-found:
		kind := "process " + bin
		if len(env) > 0 {
			kind += " with " + strings.Join(env, " ")
		}
		return &server{kind: kind, url: url, pid: cmd.Process.Pid, stop: stop}, nil
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("%s did not start serving within 30 s", filepath.Base(bin))
	}
}

// startInProcess serves the ledger from this process, as ewp-mcp does
// (with its garbage-collector target, unless GOGC is set).
func startInProcess(db string) (*server, error) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	l, err := ledger.Open(db, ledger.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l.Close()
		return nil, err
	}
	addr := ln.Addr().String()
	h, err := ewpHandler(l, addr)
	if err != nil {
		ln.Close()
		l.Close()
		return nil, err
	}
	stop := serveOn(ln, h, func() { l.Close() })
	return &server{kind: "in-process", url: "http://" + addr + mcp.EndpointPath, inproc: true, stop: stop}, nil
}

// ewpHandler is ewp-mcp's HTTP handler over l, logging nothing.
func ewpHandler(l *ledger.Ledger, addr string) (http.Handler, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return mcp.New(ledgerstore.New(l), mcp.WithLogger(quiet)).HTTPHandler(mcp.HTTPConfig{Addr: addr})
}

// serveOn serves h on ln with ewp-mcp's server settings; the function it
// returns shuts the server down (closing it if that takes over 10 s), then
// runs after.
func serveOn(ln net.Listener, h http.Handler, after func()) (stop func()) {
	hs := mcp.NewHTTPServer(ln.Addr().String(), h)
	go func() { _ = hs.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			_ = hs.Close()
		}
		after()
	}
}

// result is one load's measurement.
type result struct {
	Clients int `json:"clients"`
	// Rate is the calls/s the clients sent together (N@R), 0 when they
	// called as fast as they were answered.
	Rate        float64 `json:"rate,omitempty"`
	Calls       int     `json:"calls"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_sec"`
	P50ms       float64 `json:"p50_ms"`
	P90ms       float64 `json:"p90_ms"`
	P99ms       float64 `json:"p99_ms"`
	P999ms      float64 `json:"p99_9_ms"`
	MaxMs       float64 `json:"max_ms"`
	// CPU per call in microseconds, from /proc (Linux; 0 elsewhere). In
	// process, the server's figure is the whole process (client included)
	// and the client's is 0.
	ServerCPUus float64 `json:"server_cpu_us_per_call"`
	ClientCPUus float64 `json:"client_cpu_us_per_call"`
	// OtherCores is the CPU other processes on the machine used during the
	// measurement, in cores: anything above ~0.05 means the numbers were
	// taken on a busy machine.
	OtherCores float64 `json:"other_cores"`
	// Major page faults of the server and of the client during the
	// measurement: reads from the disk of pages that were not in memory
	// (see usage.go). Each one stalls a thread for a disk read.
	ServerFaults int64 `json:"server_major_faults"`
	ClientFaults int64 `json:"client_major_faults"`
	// With -arrival: from sending a call until its answer reached the
	// client's socket, before the client got a core to read it.
	ArrivalP50ms float64 `json:"arrival_p50_ms,omitempty"`
	ArrivalP99ms float64 `json:"arrival_p99_ms,omitempty"`
}

func (r result) String() string {
	s := fmt.Sprintf("clients=%-10s calls/s=%8.0f  p50=%6.2f ms  p90=%6.2f ms  p99=%6.2f ms  p99.9=%6.2f ms  max=%7.2f ms  (%d calls in %.1f s)",
		load{r.Clients, r.Rate}, r.CallsPerSec, r.P50ms, r.P90ms, r.P99ms, r.P999ms, r.MaxMs, r.Calls, r.Seconds)
	if r.Rate > 0 && r.CallsPerSec < 0.97*r.Rate {
		s += "  BEHIND: the server did not keep up with the rate"
	}
	if r.ArrivalP50ms > 0 {
		s += fmt.Sprintf("  arrival p50=%.2f ms p99=%.2f ms", r.ArrivalP50ms, r.ArrivalP99ms)
	}
	if r.ServerCPUus > 0 {
		s += fmt.Sprintf("  cpu/call: server %.0f µs, client %.0f µs; other processes %.2f cores",
			r.ServerCPUus, r.ClientCPUus, r.OtherCores)
	}
	if r.ServerFaults+r.ClientFaults > 0 {
		s += fmt.Sprintf("  DISK: %d major page faults in the server, %d in the client", r.ServerFaults, r.ClientFaults)
	}
	return s
}

// measure runs a load for the warmup, then for the measured duration.
func measure(srv *server, cfg config, ld load) (result, error) {
	n := ld.clients
	posters, release, err := newPosters(cfg.client, srv.url, n, cfg.arrival)
	if err != nil {
		return result{}, err
	}
	defer release()

	var recording atomic.Bool
	var stop atomic.Bool
	lat := make([][]time.Duration, n)
	arr := make([][]time.Duration, n)
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for w := range n {
		lat[w] = make([]time.Duration, 0, 1<<16)
		wg.Go(func() {
			defer posters[w].close()
			rng := rand.New(rand.NewPCG(uint64(w), 0x5eed))
			var pace *pacer
			if ld.rate > 0 {
				pace = newPacer(rng, ld.rate/float64(n), time.Now())
			}
			if err := worker(posters[w], cfg.props, rng, pace, &recording, &stop, &lat[w], &arr[w]); err != nil {
				errc <- err
				stop.Store(true)
			}
		})
	}
	time.Sleep(cfg.warmup)
	use0 := usage(srv)
	start := time.Now()
	recording.Store(true)
	time.Sleep(cfg.duration)
	recording.Store(false)
	elapsed := time.Since(start)
	use1 := usage(srv)
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errc:
		return result{}, err
	default:
	}
	all := sorted(lat)
	if len(all) == 0 {
		return result{}, errors.New("no call completed")
	}
	r := result{
		Clients: n, Rate: ld.rate, Calls: len(all), Seconds: elapsed.Seconds(),
		CallsPerSec: float64(len(all)) / elapsed.Seconds(),
		P50ms:       quantileMs(all, 50, 100), P90ms: quantileMs(all, 90, 100),
		P99ms: quantileMs(all, 99, 100), P999ms: quantileMs(all, 999, 1000), MaxMs: quantileMs(all, 1, 1),
	}
	if a := sorted(arr); len(a) > 0 {
		r.ArrivalP50ms, r.ArrivalP99ms = quantileMs(a, 50, 100), quantileMs(a, 99, 100)
	}
	if use0.ok && use1.ok {
		server, self := use1.server.cpu-use0.server.cpu, use1.self.cpu-use0.self.cpu
		ours := server + self
		r.ServerFaults = use1.server.majorFaults - use0.server.majorFaults
		r.ClientFaults = use1.self.majorFaults - use0.self.majorFaults
		if srv.inproc {
			self, ours, r.ClientFaults = 0, server, 0
		}
		r.ServerCPUus = float64(server.Microseconds()) / float64(len(all))
		r.ClientCPUus = float64(self.Microseconds()) / float64(len(all))
		r.OtherCores = max(0, (use1.machine-use0.machine-ours).Seconds()/elapsed.Seconds())
	}
	return r, nil
}

// sorted joins the workers' latencies in order.
func sorted(per [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, l := range per {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// quantileMs is the num/den quantile of sorted latencies, in milliseconds
// (1/1 is the largest).
func quantileMs(sorted []time.Duration, num, den int) float64 {
	i := min(len(sorted)*num/den, len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

// worker calls warrant_now on random propositions until stop, recording
// latencies while recording is set, and with -arrival the time until each
// answer reached the socket. Without a pacer it calls again as soon as it
// is answered; with one, when the pacer says the call is due, and the
// latency runs from then.
func worker(p poster, props int, rng *rand.Rand, pace *pacer, recording, stop *atomic.Bool, lat, arr *[]time.Duration) error {
	stamped, _ := p.(interface{ arrived() time.Time })
	var body []byte
	var resp bytes.Buffer
	for i := 0; !stop.Load(); i++ {
		prop := rng.IntN(props)
		body = appendCall(body[:0], i, prop)
		t0 := time.Now()
		if pace != nil {
			// A call due while the previous one was still out is late by
			// the server's doing and counts from when it was due; one the
			// client slept for counts from when the client woke, since
			// the timer's lag is not the server's.
			if due := pace.next(); due.After(t0) {
				if !sleepUntil(due, stop) {
					break
				}
				t0 = time.Now()
			} else {
				t0 = due
			}
		}
		status, err := p.post(body, &resp)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if err := checkResponse(status, resp.Bytes(), prop, i < 20); err != nil {
			return err
		}
		if recording.Load() {
			*lat = append(*lat, d)
			if stamped != nil {
				if at := stamped.arrived(); !at.IsZero() {
					*arr = append(*arr, at.Sub(t0))
				}
			}
		}
	}
	return nil
}

// sleepUntil sleeps until t, or until stop, checking it at least every
// 100 ms so that a slow rate does not hold up the end of a measurement;
// it reports whether it reached t.
func sleepUntil(t time.Time, stop *atomic.Bool) bool {
	for wait := time.Until(t); wait > 0; wait = time.Until(t) {
		if stop.Load() {
			return false
		}
		time.Sleep(min(wait, 100*time.Millisecond))
	}
	return true
}

// appendCall appends the warrant_now request with JSON-RPC id id for
// proposition P-<prop, 7 digits>; strconv instead of fmt, because client
// CPU is taken from the server sharing the cores.
func appendCall(b []byte, id, prop int) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"warrant_now","arguments":{"proposition_id":"P-`...)
	p := strconv.Itoa(prop)
	for range 7 - len(p) {
		b = append(b, '0')
	}
	b = append(b, p...)
	return append(b, `","evaluated_at":"`+evaluatedAt+`"}}}`...)
}

var accepted = []byte(`"acceptance":"ACCEPTED"`)

// checkResponse makes sure the server answered the question: every answer
// is a successful tool result with an ACCEPTED warrant; full is a complete
// decode that also checks the proposition.
func checkResponse(status int, body []byte, prop int, full bool) error {
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", status, body)
	}
	if !bytes.Contains(body, accepted) || bytes.Contains(body, []byte(`"isError":true`)) {
		return fmt.Errorf("unexpected answer: %.300s", body)
	}
	if !full {
		return nil
	}
	var m struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				PropositionID string `json:"proposition_id"`
				EvaluatedAt   string `json:"evaluated_at"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("answer is not JSON: %v: %.300s", err, body)
	}
	sc := m.Result.StructuredContent
	if want := fmt.Sprintf("P-%07d", prop); m.Result.IsError || sc.PropositionID != want || sc.EvaluatedAt != evaluatedAt {
		return fmt.Errorf("asked for %s at %s, got: %.300s", want, evaluatedAt, body)
	}
	return nil
}
