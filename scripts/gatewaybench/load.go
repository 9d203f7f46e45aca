package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// result is one run against one target.
type result struct {
	Calls    int64
	Errors   int64
	PerSec   float64
	P50, P99 time.Duration
	FirstErr string
}

func (r result) String() string {
	s := fmt.Sprintf("%8.0f calls/s  p50 %7.3f ms  p99 %7.3f ms  (%d calls, %d errors)",
		r.PerSec, ms(r.P50), ms(r.P99), r.Calls, r.Errors)
	if r.FirstErr != "" {
		s += "  first error: " + r.FirstErr
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// connect opens n clients to url, each with its own session.
func connect(url, tool string, n int) ([]*client, error) {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: n * 2, MaxIdleConnsPerHost: n * 2, IdleConnTimeout: time.Minute}}
	cs := make([]*client, n)
	for i := range cs {
		c, err := newClient(hc, url, tool)
		if err != nil {
			return nil, err
		}
		cs[i] = c
	}
	return cs, nil
}

// run drives the clients for d. rate 0: closed loop, each client calls
// again as soon as answered (the most calls/s the target serves). rate
// > 0: open loop, rate calls/s in all, each client on its own fixed
// schedule; latency is counted from the scheduled instant, so a target
// that falls behind pays for its queue (no coordinated omission).
func run(cs []*client, rate float64, d time.Duration) result {
	var (
		mu      sync.Mutex
		lat     []time.Duration
		calls   atomic.Int64
		errs    atomic.Int64
		first   atomic.Value
		wg      sync.WaitGroup
		start   = time.Now()
		stopped = start.Add(d)
	)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			interval := time.Duration(0)
			next := start
			if rate > 0 {
				interval = time.Duration(float64(time.Second) * float64(len(cs)) / rate)
				next = start.Add(interval * time.Duration(i) / time.Duration(len(cs)))
			}
			for n := 0; ; n++ {
				if rate > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					}
				} else {
					next = time.Now()
				}
				if next.After(stopped) {
					break
				}
				err := c.call("ping-" + strconv.Itoa(i) + "-" + strconv.Itoa(n))
				mine = append(mine, time.Since(next))
				calls.Add(1)
				if err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
				next = next.Add(interval)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	r := result{Calls: calls.Load(), Errors: errs.Load(), PerSec: float64(calls.Load()) / el.Seconds()}
	if len(lat) > 0 {
		r.P50, r.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	if f, ok := first.Load().(string); ok {
		r.FirstErr = f
	}
	return r
}
