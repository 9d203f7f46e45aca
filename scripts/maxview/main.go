// Command maxview measures warrant_now on the largest views the default
// limits admit (issue #11): it builds them (internal/maxview), stores them
// with ewp-ingest, serves the ledger with ewp-mcp --http, and fires bursts
// of concurrent calls, stored and inline. For each measurement it starts
// a server, makes one call to warm it, and prints the per-call latency
// (median, max) of the bursts that follow, calls/s and the server's peak
// resident set (VmHWM) with its resident set after the warm-up call. It
// also shows that time grows linearly with the view (a quarter, half and
// the whole of the limits), and that views just over a limit are refused
// cheaply, by ewp-ingest and by the server. Linux only; it takes a minute
// of both cores: run it by hand, not in CI.
//
//	go run ./scripts/maxview [-clients 8,64] [-rounds 3] [-gogc N] [-dir /tmp] [-bin DIR]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ewp-go/ewp/internal/maxview"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

const evaluatedAt = "2026-09-21T00:00:00Z"

func main() {
	clients := flag.String("clients", "8,64", "concurrent calls per burst, comma-separated")
	rounds := flag.Int("rounds", 3, "bursts per measurement")
	dir := flag.String("dir", os.TempDir(), "directory for the inputs and the ledger (a subdirectory, deleted after)")
	bin := flag.String("bin", "", "directory holding ewp-ingest and ewp-mcp (default: build them)")
	gogc := flag.String("gogc", "", "GOGC for the server (default: its own, mcp.GCPercent)")
	flag.Parse()
	log.SetFlags(0)
	var ns []int
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-clients: %q is not a positive number", s)
		}
		ns = append(ns, n)
	}
	work, err := os.MkdirTemp(*dir, "maxview-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	if *bin == "" {
		*bin = work
		for _, c := range []string{"ewp-ingest", "ewp-mcp"} {
			if out, err := exec.Command("go", "build", "-o", filepath.Join(work, c), "./cmd/"+c).CombinedOutput(); err != nil {
				log.Fatalf("go build %s: %v\n%s", c, err, out)
			}
		}
	}
	ingest, serve := filepath.Join(*bin, "ewp-ingest"), filepath.Join(*bin, "ewp-mcp")
	db := filepath.Join(work, "max.db")
	fmt.Printf("limits: %+v; load average %s\n", warrant.DefaultLimits, loadAverage())

	stored := storeViews(ingest, work, db)
	overIngest(ingest, work)

	// Each measurement has a server of its own, so that its peak resident
	// set is its own: Go keeps memory it freed for minutes.
	m := func(name string, body []byte, n, rounds int, want string) {
		srv := startServer(serve, db, *gogc)
		defer srv.stop()
		srv.burst(name, body, n, rounds, want)
	}
	fmt.Println("\nwarrant_now, stored views (one call at a time: time against size)")
	for _, s := range stored {
		m(fmt.Sprintf("%-14s", s.name), storedCall(s.prop), 1, 9, "acceptance")
	}
	fmt.Println("\nwarrant_now, the maximal stored view, concurrent")
	for _, n := range ns {
		m("stored 100%   ", storedCall(maxview.PropositionID), n, *rounds, "acceptance")
	}
	inline := inlineCall()
	fmt.Printf("\nwarrant_now, an inline view at the request limit (%d bytes of request)\n", len(inline))
	for _, n := range append([]int{1}, ns...) {
		m("inline        ", inline, n, *rounds, "acceptance")
	}
	fmt.Println("\nwarrant_now, inline views just over a limit (refused)")
	for _, which := range []string{"subjects", "string"} {
		m(fmt.Sprintf("over %-9s", which), inlineOf(maxview.Over(warrant.Limits{}, which)), 1, 9, warrant.CodeLimitExceeded)
	}
	m("over request  ", inlineOf(padded(mcp.MaxBodyBytes+1)), 1, 9, "413")
	fmt.Printf("\nload average %s\n", loadAverage())
}

// A storedView is one view put into the ledger.
type storedView struct{ name, prop string }

// storeViews builds the maximal stored view and two smaller ones (each
// limit scaled to a quarter and a half), stores them with ewp-ingest, and
// prints what each is and what storing the maximal one cost.
func storeViews(ingest, work, db string) []storedView {
	var out []storedView
	var small bytes.Buffer
	for _, pct := range []int{25, 50, 100} {
		d := warrant.DefaultLimits
		lim := warrant.Limits{MaxViewBytes: d.MaxViewBytes * pct / 100, MaxRecords: d.MaxRecords * pct / 100,
			MaxSubjects: d.MaxSubjects * pct / 100, MaxStringBytes: d.MaxStringBytes}
		data, sh := maxview.Build(lim, "v-max-"+strconv.Itoa(pct), maxview.StoredSize)
		prop := maxview.PropositionID
		if pct < 100 {
			prop += "-" + strconv.Itoa(pct)
			data = bytes.ReplaceAll(data, []byte(`"`+maxview.PropositionID), []byte(`"`+prop))
			small.Write(data)
			small.WriteByte('\n')
		} else {
			r := run(exec.Command(ingest, "--db", db, "--attest-trusted-origins", "--quiet", "--axes", "0", writeFile(work, "max.json", data)))
			if r.code != 0 {
				log.Fatalf("ewp-ingest of the maximal view: exit %d\n%s", r.code, r.stderr)
			}
			fmt.Printf("ewp-ingest of the maximal view: %d ms, peak RSS %d MB\n", r.wall.Milliseconds(), r.maxRSS>>20)
		}
		fmt.Printf("view %3d%%: %d bytes of JSON (%d stored), %d records, %d + %d subjects, %d adapter_meta strings\n",
			pct, sh.Bytes, maxview.StoredSize(data), sh.Records, sh.ViewSubjects, sh.CheckSubjects, sh.MetaStrings)
		out = append(out, storedView{fmt.Sprintf("stored %d%%", pct), prop})
	}
	r := run(exec.Command(ingest, "--db", db, "--attest-trusted-origins", "--quiet", "--axes", "0", writeFile(work, "small.jsonl", small.Bytes())))
	if r.code != 0 {
		log.Fatalf("ewp-ingest of the smaller views: exit %d\n%s", r.code, r.stderr)
	}
	return out
}

// overIngest gives ewp-ingest a view just over each limit, which it must
// refuse with the limit's code, and prints the time and peak memory.
func overIngest(ingest, work string) {
	for _, which := range []string{"bytes", "records", "subjects", "string"} {
		data := maxview.Over(warrant.Limits{}, which)
		r := run(exec.Command(ingest, "--db", filepath.Join(work, "over.db"), "--attest-trusted-origins", "--quiet",
			writeFile(work, "over-"+which+".json", data)))
		if r.code == 0 || !strings.Contains(r.stderr, warrant.CodeLimitExceeded) {
			log.Fatalf("ewp-ingest took a view over the %s limit: exit %d\n%s", which, r.code, r.stderr)
		}
		fmt.Printf("ewp-ingest, a view over the %-8s limit (%d bytes): refused in %d ms, peak RSS %d MB\n",
			which, len(data), r.wall.Milliseconds(), r.maxRSS>>20)
	}
}

func writeFile(dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		log.Fatal(err)
	}
	return p
}

// result is one child's measurements.
type result struct {
	wall   time.Duration
	maxRSS int64 // bytes
	code   int
	stderr string
}

// run runs the command and reads its peak resident set from getrusage.
func run(cmd *exec.Cmd) result {
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		log.Fatalf("%s: %v", cmd, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // KB on Linux
	}
	return r
}

func storedCall(prop string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now","arguments":` +
		`{"proposition_id":"` + prop + `","evaluated_at":"` + evaluatedAt + `"}}}`)
}

func inlineOf(view []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now","arguments":` +
		`{"evaluated_at":"` + evaluatedAt + `","view":` + string(view) + `}}}`)
}

// inlineCall is a warrant_now call whose inline view is as large as the
// server's request limit (mcp.MaxBodyBytes) lets it be, with both
// subjects lists full; records are fewer, so that some of them can be
// checks, assertions and evidence.
func inlineCall() []byte {
	envelope := len(inlineOf(nil))
	lim := warrant.Limits{MaxViewBytes: mcp.MaxBodyBytes - envelope, MaxRecords: 5000}
	data, sh := maxview.Build(lim, "v-inline", nil)
	fmt.Printf("\ninline view: %d bytes of JSON, %d records, %d + %d subjects, %d adapter_meta strings\n",
		sh.Bytes, sh.Records, sh.ViewSubjects, sh.CheckSubjects, sh.MetaStrings)
	call := inlineOf(data)
	if len(call) > mcp.MaxBodyBytes {
		log.Fatalf("the inline call is %d bytes, over the request limit %d", len(call), mcp.MaxBodyBytes)
	}
	return call
}

// padded is a request of n bytes: a call whose adapter_meta fills it.
func padded(n int) []byte {
	short := inlineOf([]byte(`{"proposition_id":"P-pad","adapter_meta":{"m":""}}`))
	return inlineOf([]byte(`{"proposition_id":"P-pad","adapter_meta":{"m":"` + strings.Repeat("x", n-len(short)) + `"}}`))
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

var servingURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// startServer runs ewp-mcp --db db --http on a free port and reads the
// address it chose from its log.
func startServer(bin, db, gogc string) *server {
	cmd := exec.Command(bin, "--db", db, "--http", "127.0.0.1:0")
	if gogc != "" {
		cmd.Env = append(os.Environ(), "GOGC="+gogc)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
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
			}
		}
	}()
	s := &server{cmd: cmd, pid: cmd.Process.Pid}
	select {
	case s.url = <-found:
		return s
	case <-time.After(30 * time.Second):
		s.stop()
		log.Fatal("ewp-mcp did not start serving within 30 s")
		return nil
	}
}
