package console

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// esc escapes text for SVG inside HTML.
func esc(s string) string { return html.EscapeString(s) }

// Chart geometry, in SVG user units.
const (
	chartW     = 960
	chartLeft  = 120
	chartRight = 20
	chartTop   = 44
	bandH      = 28
	bandGap    = 6
)

var axisNames = []string{"acceptance", "conflict", "verification", "currency", "sufficiency"}

func axisValue(a warrant.Axes, i int) string {
	return [...]string{a.Acceptance, a.Conflict, a.Verification, a.Currency, a.Sufficiency}[i]
}

// warrantChart draws each axis as a band across time: one coloured stretch
// per segment, snapshot creations as dashed rules, the instants currency
// turned STALE as red rules with their time, a time axis whose labels are
// as fine as the span needs, and a legend of the colours drawn.
func warrantChart(segs []segment, hist []SnapshotInfo, now warrant.Instant) string {
	if len(segs) == 0 {
		return ""
	}
	t0, t1 := segs[0].From, now
	if t1 <= t0 {
		t1 = t0 + 1
	}
	plotW := float64(chartW - chartLeft - chartRight)
	x := func(t warrant.Instant) float64 {
		return chartLeft + plotW*float64(t-t0)/float64(t1-t0)
	}
	legend := legendOf(segs)
	bottom := chartTop + len(axisNames)*(bandH+bandGap)
	ticksY := bottom + 40
	h := ticksY + 8 + len(legend)*legendLine
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	fmt.Fprintf(&b, `<title id="chart-title">Warrant over time</title><desc id="chart-desc">Each axis as a band from %s to now (%s); the table below lists the same stretches.</desc>`,
		esc(timeOf(t0).Format(time.RFC3339)), esc(timeOf(now).Format(time.RFC3339)))
	for i, name := range axisNames {
		y := chartTop + i*(bandH+bandGap)
		fmt.Fprintf(&b, `<text class="band-label" x="%d" y="%d">%s</text>`, chartLeft-8, y+bandH/2+4, name)
		for _, s := range segs {
			w := max(x(s.To)-x(s.From), 1)
			v := axisValue(s.Axes, i)
			fmt.Fprintf(&b, `<rect class="%s" x="%.2f" y="%d" width="%.2f" height="%d"><title>%s %s from %s to %s (snapshot %s)</title></rect>`,
				esc(valueClass(name, v)), x(s.From), y, w, bandH, name, esc(v),
				esc(timeOf(s.From).Format(time.RFC3339)), esc(timeOf(s.To).Format(time.RFC3339)), esc(s.ViewID))
		}
	}
	// A snapshot label that would run into the previous one goes a line
	// higher (snapshots stored close together).
	lastEnd, row := -1e9, 0
	for _, hs := range hist {
		if at := instantOf(hs.CreatedAt); at >= t0 && at <= t1 {
			label := short(hs.ViewID)
			row = map[bool]int{true: 1 - row, false: 0}[x(at) < lastEnd]
			fmt.Fprintf(&b, `<line class="snap-rule" x1="%.2f" x2="%.2f" y1="%d" y2="%d"/><text class="snap-label" x="%.2f" y="%d">%s</text>`,
				x(at), x(at), chartTop-14-row*13, bottom, x(at)+2, chartTop-18-row*13, esc(label))
			lastEnd = x(at) + 2 + float64(len(label))*labelCharW
		}
	}
	for _, s := range segs {
		if s.StaleAt != 0 {
			// In the right half the label runs leftwards from the rule, so
			// a crossing near now is not cut off at the chart's edge.
			lx, anchor := x(s.StaleAt)+3, "start"
			if x(s.StaleAt) > chartLeft+plotW/2 {
				lx, anchor = x(s.StaleAt)-3, "end"
			}
			fmt.Fprintf(&b, `<line class="stale-rule" x1="%.2f" x2="%.2f" y1="%d" y2="%d"/><text class="stale-label" x="%.2f" y="%d" text-anchor="%s">STALE after %s</text>`,
				x(s.StaleAt), x(s.StaleAt), chartTop-4, bottom+4, lx, bottom+16, anchor, esc(timeOf(s.StaleAt).Format("2006-01-02 15:04:05Z")))
		}
	}
	for _, tk := range ticks(t0, t1) {
		anchor := "middle"
		switch {
		case tk.At == t0:
			anchor = "start"
		case tk.At == t1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text class="tick" text-anchor="%s" x="%.2f" y="%d">%s</text>`, anchor, x(tk.At), ticksY, esc(tk.Label))
	}
	for i, l := range legend {
		y := ticksY + 8 + i*legendLine
		fmt.Fprintf(&b, `<g class="legend"><rect class="%s" x="%d" y="%d" width="14" height="12"/><text x="%d" y="%d">%s: %s</text></g>`,
			esc(l.Class), chartLeft, y+4, chartLeft+20, y+14, esc(l.Meaning), esc(strings.Join(l.Values, ", ")))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// tick is one time-axis label.
type tick struct {
	At    warrant.Instant
	Label string
}

// ticks labels the chart's span at five even instants, each written only
// as finely as the span needs (days, minutes or seconds), and drops a label
// that would repeat its neighbour's: a ledger stored seconds ago spans
// seconds, and five "2026-12-01 23:07" would say nothing.
func ticks(t0, t1 warrant.Instant) []tick {
	span := time.Duration(t1-t0) * time.Microsecond
	layout := "15:04:05"
	switch {
	case span >= 4*24*time.Hour:
		layout = "2 Jan 2006"
	case span >= 4*time.Hour:
		layout = "2 Jan 15:04"
	case span >= 4*time.Minute:
		layout = "15:04"
	}
	var out []tick
	for k := 0; k <= 4; k++ {
		at := t0 + (t1-t0)*warrant.Instant(k)/4
		label := timeOf(at).Format(layout)
		if len(out) > 0 && out[len(out)-1].Label == label {
			continue
		}
		out = append(out, tick{At: at, Label: label})
	}
	if last := &out[len(out)-1]; last.At != t1 && timeOf(t1).Format(layout) != last.Label {
		out = append(out, tick{At: t1, Label: timeOf(t1).Format(layout)})
	}
	return out
}

// legendLine is the height of one legend entry.
const legendLine = 18

// legendEntry is one colour of the chart with what it means and the
// axis values drawn in it.
type legendEntry struct {
	Class, Meaning string
	Values         []string
}

// tones are the chart's colours, best first, with what each means.
var tones = []struct{ Class, Meaning string }{
	{"v-good", "holds"},
	{"v-weak", "holds, weakly"},
	{"v-aging", "aging or degraded"},
	{"v-bad", "does not hold"},
}

// legendOf lists the colours the chart draws, each with the axis values
// drawn in it ("verification HUMAN"), so every band can be read without
// hovering.
func legendOf(segs []segment) []legendEntry {
	seen := map[string]bool{}
	byClass := map[string][]string{}
	for i, name := range axisNames {
		for _, s := range segs {
			v := axisValue(s.Axes, i)
			key := name + " " + v
			if !seen[key] {
				seen[key] = true
				byClass[valueClass(name, v)] = append(byClass[valueClass(name, v)], key)
			}
		}
	}
	var out []legendEntry
	for _, t := range tones {
		if vs := byClass[t.Class]; len(vs) > 0 {
			out = append(out, legendEntry{Class: t.Class, Meaning: t.Meaning, Values: vs})
		}
	}
	return out
}

// valueClass is the CSS class of an axis value's colour (see tones). NONE
// is good on the conflict axis and bad on verification, so the axis is
// part of the key.
func valueClass(axis, v string) string {
	switch v {
	case warrant.Accepted, warrant.Current, warrant.Sufficient, warrant.VerHuman, warrant.VerExternal:
		return "v-good"
	case warrant.Tentative, warrant.VerIndirect, warrant.Insufficient, warrant.ConflictResolved:
		return "v-weak"
	case warrant.Stale, warrant.Degraded:
		return "v-aging"
	case warrant.Unaccepted, warrant.ConflictOpen, warrant.Superseded:
		return "v-bad"
	case "NONE":
		if axis == "conflict" {
			return "v-good"
		}
		return "v-bad"
	}
	return "v-other"
}
