package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
)

// -compare-audit measures what recording may_act's decisions costs: each
// load runs with the decision log off and on, in rounds, each measurement
// on a server of its own started for it (with an empty log when on). The
// order alternates (off first in odd rounds, on first in even ones), so a
// machine that slows down or speeds up during the run does not favour
// either side, and the median ratio of the rounds is the figure to quote.

// A comparison is one load measured with the log off and on.
type comparison struct {
	Clients int     `json:"clients"`
	Rate    float64 `json:"rate,omitempty"`
	Rounds  []round `json:"rounds"`
	// MedianRatio is the median over the rounds of Ratio.
	MedianRatio float64 `json:"median_ratio"`
}

// A round is one measurement with the log off and one with it on.
type round struct {
	Off result `json:"off"`
	On  result `json:"on"`
	// Ratio is on's calls/s over off's: the share of its throughput the
	// server keeps when it records every decision.
	Ratio   float64 `json:"ratio"`
	OnFirst bool    `json:"on_first"`
}

func newRound(off, on result, onFirst bool) round {
	rd := round{Off: off, On: on, OnFirst: onFirst}
	if off.CallsPerSec > 0 {
		rd.Ratio = on.CallsPerSec / off.CallsPerSec
	}
	return rd
}

// compareAudit runs the comparison for every load and prints it.
func compareAudit(ln *launcher, cfg config) error {
	fmt.Fprintf(os.Stderr, "comparing %s with the decision log off and on: %d propositions, %d rounds per load, GOMAXPROCS %d, %d CPUs\n",
		cfg.tool, cfg.props, cfg.rounds, runtime.GOMAXPROCS(0), runtime.NumCPU())
	var out []comparison
	for _, ld := range cfg.loads {
		c := comparison{Clients: ld.clients, Rate: ld.rate}
		for i := range cfg.rounds {
			onFirst := i%2 == 1
			var res [2]result // off, on
			for j, logged := range []bool{onFirst, !onFirst} {
				first := len(out) == 0 && i == 0 && j == 0
				r, err := measureOnce(ln, cfg, ld, logged, first)
				if err != nil {
					return fmt.Errorf("load %v, round %d, decision log %s: %w", ld, i+1, onOff(logged), err)
				}
				res[btoi(logged)] = r
			}
			c.Rounds = append(c.Rounds, newRound(res[0], res[1], onFirst))
			if !cfg.jsonOut {
				fmt.Println(c.Rounds[i].line(ld, i+1))
			}
		}
		c.MedianRatio = medianRatio(c.Rounds)
		out = append(out, c)
		if !cfg.jsonOut {
			fmt.Println(c.summary())
		}
	}
	if cfg.jsonOut {
		return printJSON(out)
	}
	return nil
}

// measureOnce starts a server with the log on or off, measures ld and
// stops it; first says to name the server on stderr.
func measureOnce(ln *launcher, cfg config, ld load, logged, first bool) (result, error) {
	srv, err := ln.start(logged)
	if err != nil {
		return result{}, err
	}
	defer srv.stop()
	if first {
		fmt.Fprintf(os.Stderr, "server %s\n", srv.kind)
	}
	cfg.audit = logged
	return measure(srv, cfg, ld)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// line is the round in one line: each side's calls/s and server CPU per
// call, and their ratio.
func (rd round) line(ld load, n int) string {
	order := "off, then on"
	if rd.OnFirst {
		order = "on, then off"
	}
	return fmt.Sprintf("clients=%-10s round %d (%s): off %6.0f calls/s %4.0f µs/call%s  on %6.0f calls/s %4.0f µs/call%s  on/off %.3f",
		ld, n, order, rd.Off.CallsPerSec, rd.Off.ServerCPUus, rd.Off.warnings(),
		rd.On.CallsPerSec, rd.On.ServerCPUus, rd.On.warnings(), rd.Ratio)
}

// warnings marks a measurement that measured more than the server: one
// that fell behind its rate, waited on the disk, or shared the machine
// with other busy processes.
func (r result) warnings() string {
	var w []string
	if r.behind() {
		w = append(w, "BEHIND")
	}
	if r.ServerFaults+r.ClientFaults > 0 {
		w = append(w, "DISK")
	}
	if r.OtherCores >= 0.05 {
		w = append(w, fmt.Sprintf("BUSY %.2f cores", r.OtherCores))
	}
	if len(w) == 0 {
		return ""
	}
	return " (" + strings.Join(w, ", ") + ")"
}

func (c comparison) summary() string {
	lo, hi := c.Rounds[0].Ratio, c.Rounds[0].Ratio
	for _, rd := range c.Rounds {
		lo, hi = min(lo, rd.Ratio), max(hi, rd.Ratio)
	}
	return fmt.Sprintf("clients=%-10s median on/off %.3f over %d rounds (%.3f–%.3f)",
		load{c.Clients, c.Rate}, c.MedianRatio, len(c.Rounds), lo, hi)
}

// medianRatio is the median of the rounds' ratios (the mean of the middle
// two when there is an even number of rounds).
func medianRatio(rounds []round) float64 {
	if len(rounds) == 0 {
		return 0
	}
	r := make([]float64, len(rounds))
	for i, rd := range rounds {
		r[i] = rd.Ratio
	}
	slices.Sort(r)
	m := len(r) / 2
	if len(r)%2 == 0 {
		return (r[m-1] + r[m]) / 2
	}
	return r[m]
}
