package main

import (
	"slices"
	"testing"
	"time"
)

// Slices go off on on off off on …: each side leads every other pair, so
// a machine that speeds up or slows down steadily favours neither.
func TestSliceOrder(t *testing.T) {
	got := sliceOrder(8)
	if want := []int{0, 1, 1, 0, 0, 1, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("sliceOrder(8) = %v, want %v", got, want)
	}
}

// summarize rates each side by the calls counted in its own slices over
// their time, and each adjacent pair by its two counts, whichever side
// led it.
func TestSummarize(t *testing.T) {
	sides := sliceOrder(4) // off on on off
	ms := time.Millisecond
	lats := func(n int) [][]time.Duration {
		l := make([]time.Duration, n)
		for i := range l {
			l[i] = time.Duration(i+1) * ms
		}
		return [][]time.Duration{l[:n/2], l[n/2:]} // two clients
	}
	counts := []sliceCounts{{lats(100)}, {lats(80)}, {lats(60)}, {lats(120)}}
	r, err := summarize(2, 500*ms, sides, counts, [2]float64{1, 1}, [2]usageSample{}, [2]usageSample{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Off.Calls != 220 || r.On.Calls != 140 || r.Off.CallsPerSec != 220 || r.On.CallsPerSec != 140 {
		t.Errorf("sides: off %+v, on %+v", r.Off, r.On)
	}
	if want := []float64{0.8, 0.5}; !slices.Equal(r.PairRatios, want) {
		t.Errorf("pair ratios %v, want %v", r.PairRatios, want)
	}
	if r.Ratio != 140.0/220.0 {
		t.Errorf("ratio %v, want %v", r.Ratio, 140.0/220.0)
	}
	if r.On.P99ms != 79 || r.Off.P50ms != 56 { // the 139th of 140, the 111th of 220
		t.Errorf("latencies: on p99 %v ms, off p50 %v ms", r.On.P99ms, r.Off.P50ms)
	}
	if _, err := summarize(2, 500*ms, sides, []sliceCounts{{}, {}, {}, {}}, [2]float64{1, 1}, [2]usageSample{}, [2]usageSample{}); err == nil {
		t.Error("summarize accepted a measurement without a call")
	}
}
