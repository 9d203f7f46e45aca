package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

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
	if r.behind() {
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

// behind reports whether a paced load completed clearly fewer calls than
// it sent: over 3% short, and by more than a Poisson count's chance
// shortfall (4 standard deviations), which short runs at low rates
// would otherwise be flagged for.
func (r result) behind() bool {
	if r.Rate == 0 {
		return false
	}
	want := r.Rate * r.Seconds
	short := want - float64(r.Calls)
	return short > 0.03*want && short > 4*math.Sqrt(want)
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
			if err := worker(posters[w], cfg.call(), cfg.props, rng, pace, &recording, &stop, &lat[w], &arr[w]); err != nil {
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

// worker makes call c about random propositions until stop, recording
// latencies while recording is set, and with -arrival the time until each
// answer reached the socket. Without a pacer it calls again as soon as it
// is answered; with one, when the pacer says the call is due, and the
// latency runs from then, or from when the client woke if it slept.
func worker(p poster, c call, props int, rng *rand.Rand, pace *pacer, recording, stop *atomic.Bool, lat, arr *[]time.Duration) error {
	stamped, _ := p.(interface{ arrived() time.Time })
	var body []byte
	var resp bytes.Buffer
	for i := 0; !stop.Load(); i++ {
		prop := rng.IntN(props)
		body = c.append(body[:0], i, prop)
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
		if err := c.check(status, resp.Bytes(), prop, i < 20); err != nil {
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
	b = append(b, `,"method":"tools/call","params":{"name":"warrant_now","arguments":{"proposition_id":`...)
	b = appendPropID(b, prop)
	return append(b, `,"evaluated_at":"`+evaluatedAt+`"}}}`...)
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
