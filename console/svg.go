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
// per segment, snapshot creations as dashed rules, and the instants
// currency turned STALE as red rules with their time.
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
	h := chartTop + len(axisNames)*(bandH+bandGap) + 44
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
				esc(valueClass(v)), x(s.From), y, w, bandH, name, esc(v),
				esc(timeOf(s.From).Format(time.RFC3339)), esc(timeOf(s.To).Format(time.RFC3339)), esc(s.ViewID))
		}
	}
	bottom := chartTop + len(axisNames)*(bandH+bandGap)
	for _, hs := range hist {
		if at := instantOf(hs.CreatedAt); at >= t0 && at <= t1 {
			fmt.Fprintf(&b, `<line class="snap-rule" x1="%.2f" x2="%.2f" y1="%d" y2="%d"/><text class="snap-label" x="%.2f" y="%d">%s</text>`,
				x(at), x(at), chartTop-14, bottom, x(at)+2, chartTop-18, esc(short(hs.ViewID)))
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
	for k := 0; k <= 4; k++ {
		t := t0 + (t1-t0)*warrant.Instant(k)/4
		anchor := map[int]string{0: "start", 4: "end"}[k]
		if anchor == "" {
			anchor = "middle"
		}
		fmt.Fprintf(&b, `<text class="tick" text-anchor="%s" x="%.2f" y="%d">%s</text>`, anchor, x(t), h-4, esc(timeOf(t).Format("2006-01-02 15:04")))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// valueClass is the CSS class of an axis value's colour.
func valueClass(v string) string { return "v-" + strings.ToLower(v) }
