// Command gatewaybench measures what ewp-gateway costs a tool call, side
// by side in one run with a plain proxy: a trivial echo downstream (the
// official TypeScript SDK's, scripts/clients/gateway/echo-server.mjs, and
// for reference the Go one, scripts/mcpecho) called
//
//   - direct, over its own Streamable HTTP endpoint;
//   - through ewp-gateway (gate and decision log on: every call is
//     described, judged, recorded before it is forwarded and its result
//     recorded after), the echo server its stdio downstream;
//   - through mcp-proxy (npm; a plain stdio-to-HTTP proxy with no policy,
//     run with --no-eventStore), the echo server its stdio child.
//
// For each, 64 clients (one session each) first call as fast as they are
// answered (the calls/s the path serves), then at a fixed offered rate
// (500 calls/s in all; latency from each call's scheduled instant). Not
// run in CI. Needs the gateway's npm set (scripts/clients/gateway/install.sh).
//
//	go run ./scripts/gatewaybench [--clients 64] [--rate 500] [--duration 10s] [--rounds 1] [--echo ts,go]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	clients := flag.Int("clients", 64, "concurrent clients, one session each")
	rate := flag.Float64("rate", 500, "the fixed offered rate, calls/s in all")
	dur := flag.Duration("duration", 10*time.Second, "each measurement's length")
	warm := flag.Duration("warmup", 2*time.Second, "unmeasured calls before each target's measurements")
	rounds := flag.Int("rounds", 1, "measure every target this many times, interleaved")
	echoes := flag.String("echo", "ts,go", "the echo downstreams: ts (TypeScript SDK), go")
	flag.Parse()
	if err := bench(*clients, *rate, *dur, *warm, *rounds, strings.Split(*echoes, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaybench:", err)
		os.Exit(1)
	}
}

func bench(n int, rate float64, d, warm time.Duration, rounds int, echoes []string) error {
	env, err := newEnv()
	if err != nil {
		return err
	}
	defer env.close()
	fmt.Printf("gatewaybench: %d clients, %v per measurement, fixed rate %.0f calls/s, %d round(s)\n", n, d, rate, rounds)
	for _, echo := range echoes {
		targets, err := env.targets(echo)
		if err != nil {
			return err
		}
		fmt.Printf("\n== %s echo\n", echo)
		res := map[string][]pair{}
		for r := 0; r < rounds; r++ {
			for _, t := range targets {
				p, err := measure(t, n, rate, d, warm)
				if err != nil {
					return fmt.Errorf("%s %s: %w", echo, t.name, err)
				}
				fmt.Printf("  %-10s max   %s\n  %-10s fixed %s\n", t.name, p.max, "", p.fixed)
				res[t.name] = append(res[t.name], p)
			}
		}
		report(targets, res, rate)
	}
	return nil
}

// pair is one target's two measurements.
type pair struct{ max, fixed result }

func measure(t target, n int, rate float64, d, warm time.Duration) (pair, error) {
	cs, err := connect(t.url, t.tool, n)
	if err != nil {
		return pair{}, err
	}
	run(cs, 0, warm)
	p := pair{max: run(cs, 0, d), fixed: run(cs, rate, d)}
	for _, r := range []result{p.max, p.fixed} {
		if r.Errors > 0 {
			return p, fmt.Errorf("%d errors, the first: %s", r.Errors, r.FirstErr)
		}
	}
	return p, nil
}

// report prints each path against direct: calls/s as a share of
// direct's, and the latency it adds at the fixed rate (medians over the
// rounds).
func report(targets []target, res map[string][]pair, rate float64) {
	med := func(name string, f func(pair) float64) float64 {
		var v []float64
		for _, p := range res[name] {
			v = append(v, f(p))
		}
		return median(v)
	}
	perSec := func(p pair) float64 { return p.max.PerSec }
	p50 := func(p pair) float64 { return ms(p.fixed.P50) }
	p99 := func(p pair) float64 { return ms(p.fixed.P99) }
	d0, d50, d99 := med("direct", perSec), med("direct", p50), med("direct", p99)
	fmt.Printf("\n  %-10s %10s %8s %12s %12s %12s %12s\n", "path", "calls/s", "ratio", "p50 ms", "added p50", "p99 ms", "added p99")
	for _, t := range targets {
		s, m50, m99 := med(t.name, perSec), med(t.name, p50), med(t.name, p99)
		fmt.Printf("  %-10s %10.0f %8.2f %12.3f %+12.3f %12.3f %+12.3f\n", t.name, s, s/d0, m50, m50-d50, m99, m99-d99)
	}
	fmt.Printf("  (calls/s: closed loop, as fast as answered; p50/p99: at %.0f calls/s offered)\n", rate)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
