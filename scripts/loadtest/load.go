package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// A load is a number of clients, each on its own connection, and how they
// call: as fast as they are answered (rate 0), or rate calls/s together
// at random instants.
type load struct {
	clients int
	rate    float64
}

func (l load) String() string {
	if l.rate == 0 {
		return strconv.Itoa(l.clients)
	}
	return fmt.Sprintf("%d@%g", l.clients, l.rate)
}

// parseLoads reads -clients: comma-separated N or N@R.
func parseLoads(s string) ([]load, error) {
	var loads []load
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, r, paced := strings.Cut(f, "@")
		var ld load
		var err error
		if ld.clients, err = strconv.Atoi(n); err != nil || ld.clients < 1 {
			return nil, fmt.Errorf("-clients %q: %q is not N or N@R with N a positive number of clients", s, f)
		}
		if paced {
			if ld.rate, err = strconv.ParseFloat(r, 64); err != nil || !(ld.rate > 0) || ld.rate > 1e7 {
				return nil, fmt.Errorf("-clients %q: in %q, R must be calls/s, above 0 and at most 10,000,000", s, f)
			}
		}
		loads = append(loads, ld)
	}
	return loads, nil
}

// A pacer says when one client's calls are due: at exponentially
// distributed intervals, so that many clients together send a Poisson
// stream. The schedule is fixed in advance and never waits for answers,
// so a call that falls due while the client still waits on the previous
// one is measured from its due time: measuring it from when it could be
// sent would hide a stalled server's delay from every call queued behind
// the stall (coordinated omission).
type pacer struct {
	rng  *rand.Rand
	mean float64 // seconds between calls
	due  time.Time
}

func newPacer(rng *rand.Rand, rate float64, start time.Time) *pacer {
	return &pacer{rng: rng, mean: 1 / rate, due: start}
}

// next returns when the next call is due.
func (p *pacer) next() time.Time {
	p.due = p.due.Add(time.Duration(p.rng.ExpFloat64() * p.mean * float64(time.Second)))
	return p.due
}
