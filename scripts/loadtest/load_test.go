package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseLoads(t *testing.T) {
	got, err := parseLoads("1, 8,64,64@11000,2@0.5")
	want := []load{{1, 0}, {8, 0}, {64, 0}, {64, 11000}, {2, 0.5}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parseLoads = %v, %v; want %v", got, err, want)
	}
	if s := fmt.Sprint(want); s != "[1 8 64 64@11000 2@0.5]" {
		t.Errorf("loads print as %s", s)
	}
	for _, bad := range []string{"", "0", "-1", "x", "8@", "8@0", "8@-5", "8@NaN", "8@Inf", "@100", "8@1e9", "1,,2"} {
		if got, err := parseLoads(bad); err == nil {
			t.Errorf("parseLoads(%q) = %v, want an error", bad, got)
		}
	}
}

// The pacer's calls fall due at the asked rate on average, in order.
func TestPacerRate(t *testing.T) {
	start := time.Unix(1e9, 0)
	p := newPacer(rand.New(rand.NewPCG(1, 2)), 250, start)
	const n = 100_000
	prev := start
	for range n {
		due := p.next()
		if due.Before(prev) {
			t.Fatalf("due %v before the previous call's %v", due, prev)
		}
		prev = due
	}
	if rate := n / prev.Sub(start).Seconds(); rate < 245 || rate > 255 {
		t.Errorf("%d calls at 250/s took %v: %.1f/s", n, prev.Sub(start), rate)
	}
}

// stallingPoster answers every call at once with a valid answer, except
// one that it holds for stall.
type stallingPoster struct {
	calls, stallAt, stopAfter int
	stall                     time.Duration
	stop                      *atomic.Bool
}

var propField = regexp.MustCompile(`"proposition_id":"(P-\d+)"`)

func (p *stallingPoster) post(body []byte, resp *bytes.Buffer) (int, error) {
	p.calls++
	if p.calls == p.stallAt {
		time.Sleep(p.stall)
	}
	if p.calls == p.stopAfter {
		p.stop.Store(true)
	}
	resp.Reset()
	fmt.Fprintf(resp, `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"proposition_id":%q,"evaluated_at":%q,"warrant":{"acceptance":"ACCEPTED"}}}}`,
		propField.FindSubmatch(body)[1], evaluatedAt)
	return 200, nil
}

func (*stallingPoster) close() {}

// A paced client charges a server's stall to every call that fell due
// during it, not just to the call the server held; a closed-loop client
// has only the one slow call to report.
func TestWorkerChargesStallToQueuedCalls(t *testing.T) {
	const stall = 80 * time.Millisecond
	slow := func(pace *pacer) int {
		var recording, stop atomic.Bool
		recording.Store(true)
		p := &stallingPoster{stallAt: 10, stall: stall, stopAfter: 300, stop: &stop}
		rng := rand.New(rand.NewPCG(3, 4))
		var lat, arr []time.Duration
		if err := worker(p, call{tool: toolWarrantNow}, 1000, rng, pace, &recording, &stop, &lat, &arr); err != nil {
			t.Fatal(err)
		}
		if len(lat) != 300 {
			t.Fatalf("recorded %d calls, want 300", len(lat))
		}
		n := 0
		for _, d := range lat {
			if d >= 20*time.Millisecond {
				n++
			}
		}
		return n
	}
	// 1,000 calls/s: about 60 fall due in the first 60 ms of the stall,
	// each then at least 20 ms late.
	if n := slow(newPacer(rand.New(rand.NewPCG(5, 6)), 1000, time.Now())); n < 30 {
		t.Errorf("paced: %d calls took 20 ms or more, want the ~60 queued behind the stall", n)
	}
	if n := slow(nil); n < 1 || n > 5 {
		t.Errorf("closed loop: %d calls took 20 ms or more, want the stalled one", n)
	}
}

// A client waiting for a call due far ahead stops when told to, not when
// the call falls due.
func TestSleepUntilStops(t *testing.T) {
	var stop atomic.Bool
	start := time.Now()
	if !sleepUntil(start.Add(20*time.Millisecond), &stop) || time.Since(start) < 20*time.Millisecond {
		t.Errorf("sleepUntil returned after %v, before the instant it was given", time.Since(start))
	}
	time.AfterFunc(50*time.Millisecond, func() { stop.Store(true) })
	start = time.Now()
	if sleepUntil(start.Add(time.Hour), &stop) {
		t.Error("sleepUntil reached an instant an hour ahead")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("sleepUntil took %v to notice stop", d)
	}
}

// A paced run is flagged as behind only when it fell short by more than
// chance allows.
func TestBehind(t *testing.T) {
	cases := []struct {
		rate, seconds float64
		calls         int
		behind        bool
	}{
		{0, 10, 5, false},           // closed loop: never behind
		{11000, 10, 110_300, false}, // on the rate
		{11000, 10, 108_000, false}, // 1.8% short
		{11000, 10, 100_000, true},  // 9% short
		{1000, 2, 1_934, false},     // 3.3% short, but within 4 sd of 2,000
		{1000, 2, 1_500, true},      // 25% short
		{20000, 10, 150_000, true},  // a server at its limit
		{100, 1, 80, false},         // 20% short of 100: chance at that count
	}
	for _, c := range cases {
		r := result{Rate: c.rate, Seconds: c.seconds, Calls: c.calls}
		if got := r.behind(); got != c.behind {
			t.Errorf("rate %g for %gs, %d calls: behind = %v, want %v", c.rate, c.seconds, c.calls, got, c.behind)
		}
	}
}

// A round's ratio is on over off; the median is the middle round's, or
// the mean of the middle two.
func TestCompareRounds(t *testing.T) {
	rd := func(off, on float64) round {
		return newRound(result{CallsPerSec: off}, result{CallsPerSec: on}, false)
	}
	if r := rd(20000, 17000).Ratio; r != 0.85 {
		t.Errorf("ratio %v, want 0.85", r)
	}
	if r := rd(0, 100).Ratio; r != 0 {
		t.Errorf("ratio without calls off: %v, want 0", r)
	}
	odd := []round{rd(100, 90), rd(100, 70), rd(100, 80)}
	if m := medianRatio(odd); m != 0.8 {
		t.Errorf("median of .9 .7 .8 = %v", m)
	}
	if m := medianRatio(odd[:2]); math.Abs(m-0.8) > 1e-12 {
		t.Errorf("median of .9 .7 = %v", m)
	}
	c := comparison{Clients: 64, Rounds: odd, MedianRatio: medianRatio(odd)}
	if s := c.summary(); s != "clients=64         median on/off 0.800 over 3 rounds (0.700–0.900)" {
		t.Errorf("summary %q", s)
	}
}
