package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// -compare-audit -interleave S measures the decision log's cost with both
// servers running at once, the log off and on, and the clients switching
// between them every S. Separate runs of a few seconds each are at the
// mercy of a shared machine whose speed drifts by ±10% from one minute to
// the next (other tenants' work on the same host, which no counter in
// this VM shows); slices of half a second, in the order off on on off …,
// put both servers through the same drift, so their ratio is steady where
// separate runs' are not. A call is counted for a slice only when it was
// sent and answered inside it; the calls in flight at a switch are
// answered but not counted, and the slice's time runs from switch to
// switch, which both servers pay alike.

// An interleaved comparison is one closed-loop load measured this way.
type interleaved struct {
	Clients int     `json:"clients"`
	Slice   float64 `json:"slice_seconds"`
	// Names are the two sides' names: "off" and "on" (the decision log),
	// or "old" and "new" (two builds, -compare-server).
	Names [2]string `json:"names"`
	Off   side      `json:"off"`
	On    side      `json:"on"`
	// Ratio is on's calls/s over off's, over the whole measurement.
	Ratio float64 `json:"ratio"`
	// PairRatios are the ratios of each pair of adjacent slices (one off,
	// one on); their spread shows how steady the ratio was.
	PairRatios []float64 `json:"pair_ratios"`
}

// A side is one server's share of an interleaved measurement.
type side struct {
	Calls       int     `json:"calls"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_sec"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	// ServerCPUus is the server process's CPU per call counted, over the
	// whole measurement (idle while the other side is measured).
	ServerCPUus float64 `json:"server_cpu_us_per_call"`
}

// compareInterleaved runs the interleaved comparison for every load.
func compareInterleaved(ln *launcher, cfg config) error {
	what := "with the decision log off and on"
	if cfg.compareServer != "" {
		what = fmt.Sprintf("built as %s (old) and as %s (new), decision log %v", cfg.compareServer, ln.bin, onOff(cfg.audit))
	}
	fmt.Fprintf(os.Stderr, "comparing %s %s, interleaved in slices of %v for %v per load: %d propositions\n",
		cfg.tool, what, cfg.interleave, cfg.duration, cfg.props)
	var out []interleaved
	for _, ld := range cfg.loads {
		r, err := interleaveOnce(ln, cfg, ld.clients)
		if err != nil {
			return fmt.Errorf("load %v: %w", ld, err)
		}
		out = append(out, r)
		if !cfg.jsonOut {
			fmt.Println(r.line())
		}
	}
	if cfg.jsonOut {
		return printJSON(out)
	}
	return nil
}

func (r interleaved) line() string {
	q := slices.Clone(r.PairRatios)
	slices.Sort(q)
	lo, hi := q[len(q)/10], q[len(q)*9/10]
	a, b := r.Names[0], r.Names[1]
	return fmt.Sprintf("clients=%-4d %s %6.0f calls/s %4.0f µs/call p99 %5.1f ms  %s %6.0f calls/s %4.0f µs/call p99 %5.1f ms  %s/%s %.3f (%d pairs of %.1f s slices: median %.3f, p10–p90 %.3f–%.3f)",
		r.Clients, a, r.Off.CallsPerSec, r.Off.ServerCPUus, r.Off.P99ms, b, r.On.CallsPerSec, r.On.ServerCPUus, r.On.P99ms,
		b, a, r.Ratio, len(r.PairRatios), r.Slice, q[len(q)/2], lo, hi)
}

// sliceCounts is what the clients counted in one slice: each client's
// latencies, apart, so that no two goroutines share a slice.
type sliceCounts struct {
	lat [][]time.Duration
}

func interleaveOnce(ln *launcher, cfg config, n int) (interleaved, error) {
	var srvs [2]*server // off, on; or old, new
	for i := range srvs {
		s, err := ln.startSide(i)
		if err != nil {
			return interleaved{}, err
		}
		defer s.stop()
		srvs[i] = s
	}
	var posters [2][]poster
	for i, s := range srvs {
		ps, release, err := newPosters(cfg.client, s.url, n, false)
		if err != nil {
			return interleaved{}, err
		}
		defer release()
		posters[i] = ps
	}
	calls := [2]call{{tool: cfg.tool}, {tool: cfg.tool, logged: true}}
	names := [2]string{"off", "on"}
	if cfg.compareServer != "" {
		calls[0], names = cfg.call(), [2]string{"old", "new"}
	}

	// cur is the current slice's number (-1 while warming up, when
	// warmSide is the side called); its side is sides[cur].
	nSlices := max(2, int(cfg.duration/cfg.interleave)&^1)
	sides := sliceOrder(nSlices)
	var cur atomic.Int64
	cur.Store(-1)
	var warmSide atomic.Int64
	counts := make([]sliceCounts, nSlices)
	for i := range counts {
		counts[i].lat = make([][]time.Duration, n)
	}
	var stop atomic.Bool
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			if err := interleaveWorker(w, posters, calls, cfg.props, sides, counts, &cur, &warmSide, &stop); err != nil {
				errc <- err
				stop.Store(true)
			}
		})
	}
	// Warm both servers up, alternating, then measure.
	for i := range 4 {
		warmSide.Store(int64(i % 2))
		time.Sleep(cfg.warmup / 4)
	}
	u0 := [2]usageSample{usage(srvs[0]), usage(srvs[1])}
	var secs [2]float64
	for k := range nSlices {
		start := time.Now()
		cur.Store(int64(k))
		time.Sleep(cfg.interleave)
		secs[sides[k]] += time.Since(start).Seconds()
		if stop.Load() {
			break
		}
	}
	cur.Store(int64(nSlices)) // past the end: nothing more is counted
	u1 := [2]usageSample{usage(srvs[0]), usage(srvs[1])}
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errc:
		return interleaved{}, err
	default:
	}
	r, err := summarize(n, cfg.interleave, sides, counts, secs, u0, u1)
	r.Names = names
	return r, err
}

// startSide starts side i of an interleaved comparison: the log off (0)
// and on (1), or with -compare-server the old build (0) and the new one
// (1), each with a log of its own when -audit is on.
func (ln *launcher) startSide(i int) (*server, error) {
	if ln.cfg.compareServer == "" {
		return ln.start(i == 1)
	}
	bin := ln.bin
	if i == 0 {
		bin = ln.cfg.compareServer
	}
	return ln.startBinary(bin, ln.cfg.audit, []string{".old", ".new"}[i])
}

// sliceOrder is the side of each slice: off on on off off on …, so that
// each side goes first in half the pairs and a steady drift favours
// neither.
func sliceOrder(n int) []int {
	s := make([]int, n)
	for k := range s {
		pair, second := k/2, k%2
		s[k] = second ^ (pair % 2)
	}
	return s
}

// interleaveWorker calls the server of the current slice until stop. A
// call is counted for slice k when it was sent and answered within it.
func interleaveWorker(w int, posters [2][]poster, calls [2]call, props int, sides []int, counts []sliceCounts,
	cur, warmSide *atomic.Int64, stop *atomic.Bool) error {
	defer posters[0][w].close()
	defer posters[1][w].close()
	rng := rand.New(rand.NewPCG(uint64(w), 0x5eed))
	var body []byte
	var resp bytes.Buffer
	for i := 0; !stop.Load(); i++ {
		k := cur.Load()
		sd := int(warmSide.Load())
		if k >= 0 && k < int64(len(sides)) {
			sd = sides[k]
		}
		prop := rng.IntN(props)
		body = calls[sd].append(body[:0], i, prop)
		t0 := time.Now()
		status, err := posters[sd][w].post(body, &resp)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if err := calls[sd].check(status, resp.Bytes(), prop, i < 20); err != nil {
			return err
		}
		if k >= 0 && k < int64(len(sides)) && cur.Load() == k {
			counts[k].lat[w] = append(counts[k].lat[w], d)
		}
	}
	return nil
}

func summarize(n int, slice time.Duration, sides []int, counts []sliceCounts, secs [2]float64, u0, u1 [2]usageSample) (interleaved, error) {
	r := interleaved{Clients: n, Slice: slice.Seconds()}
	var lat [2][][]time.Duration
	perSlice := make([]int, len(sides))
	for k, c := range counts {
		for _, l := range c.lat {
			perSlice[k] += len(l)
		}
		lat[sides[k]] = append(lat[sides[k]], c.lat...)
	}
	for p := 0; p+1 < len(sides); p += 2 {
		off, on := perSlice[p], perSlice[p+1]
		if sides[p] == 1 {
			off, on = on, off
		}
		if off > 0 {
			r.PairRatios = append(r.PairRatios, float64(on)/float64(off))
		}
	}
	for i, sd := range []*side{&r.Off, &r.On} {
		all := sorted(lat[i])
		if len(all) == 0 || secs[i] == 0 {
			return r, errors.New("no call completed on one side")
		}
		sd.Calls, sd.Seconds = len(all), secs[i]
		sd.CallsPerSec = float64(len(all)) / secs[i]
		sd.P50ms, sd.P99ms = quantileMs(all, 50, 100), quantileMs(all, 99, 100)
		if u0[i].ok && u1[i].ok {
			sd.ServerCPUus = float64((u1[i].server.cpu - u0[i].server.cpu).Microseconds()) / float64(len(all))
		}
	}
	if len(r.PairRatios) == 0 {
		return r, errors.New("no pair of slices completed calls")
	}
	r.Ratio = r.On.CallsPerSec / r.Off.CallsPerSec
	return r, nil
}
