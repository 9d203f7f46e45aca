package console

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// A ledger stored seconds ago spans seconds: its time axis must not
// repeat one minute five times, and every label differs from the others.
func TestChartTicksDistinctOnAFreshLedger(t *testing.T) {
	t0 := instantOf(time.Date(2026, 12, 1, 23, 7, 10, 0, time.UTC))
	for _, span := range []time.Duration{0, 2 * time.Second, 40 * time.Second, 30 * time.Minute, 6 * time.Hour, 3 * 24 * time.Hour, 200 * 24 * time.Hour} {
		t1 := t0 + warrant.Instant(span/time.Microsecond)
		svg := warrantChart([]segment{{From: t0, To: t1, ViewID: "v"}}, nil, t1)
		labels := regexp.MustCompile(`<text class="tick"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
		var seen []string
		for _, m := range labels {
			if slices.Contains(seen, m[1]) {
				t.Errorf("span %v: tick label %q twice in %q", span, m[1], seen)
			}
			seen = append(seen, m[1])
		}
		if len(seen) == 0 {
			t.Errorf("span %v: no tick label", span)
		}
		if span >= 2*time.Second && len(seen) < 2 {
			t.Errorf("span %v: only %q on the time axis", span, seen)
		}
	}
}

// The chart names its colours: a legend with a swatch per colour drawn,
// each with the axis values drawn in it; verification NONE is not drawn
// in the colour of conflict NONE.
func TestChartLegend(t *testing.T) {
	t0 := instantOf(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	axes := warrant.Axes{Acceptance: warrant.Accepted, Conflict: warrant.ConflictNone, Verification: warrant.VerNone,
		Currency: warrant.Stale, Sufficiency: warrant.Sufficient}
	svg := warrantChart([]segment{{From: t0, To: t0 + 1e9, ViewID: "v", Axes: axes}}, nil, t0+1e9)
	for _, want := range []string{
		`<g class="legend"><rect class="v-good"`, "holds: acceptance ACCEPTED, conflict NONE, sufficiency SUFFICIENT",
		`<g class="legend"><rect class="v-aging"`, "aging or degraded: currency STALE",
		`<g class="legend"><rect class="v-bad"`, "does not hold: verification NONE",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, "v-weak") {
		t.Error("the legend lists a colour the chart does not draw")
	}
}

// The first snapshot is charted from its earliest record, not only from
// when it was stored: evidence ingested a minute ago may be months old.
func TestTimelineStartsAtTheEarliestRecord(t *testing.T) {
	v := mustView(t, staleView) // assertion 2026-11-01T10:00, check 11:00:00.25
	created := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	now := instantOf(created.Add(time.Minute))
	segs, err := timeline([]datedView{{Info: SnapshotInfo{ViewID: "v1", CreatedAt: created}, View: v}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := timeOf(segs[0].From), time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("chart starts at %v, want the assertion's %v", got, want)
	}
	var stale bool
	for _, s := range segs {
		stale = stale || s.StaleAt != 0
	}
	if !stale {
		t.Fatalf("the STALE crossing before storage is not on the chart: %+v", segs)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2592000 * time.Second: "30 days", 24 * time.Hour: "1 day", 36 * time.Hour: "1 day", 3 * time.Hour: "3 hours",
		time.Hour: "1 hour", 90 * time.Second: "1 minute", 45 * time.Second: "45 seconds", 0: "0 seconds", -2 * time.Hour: "2 hours",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The freshness policy is said in days, with the day the warrant went
// stale and how long ago, or the day it will.
func TestFreshnessText(t *testing.T) {
	v := mustView(t, staleView) // policy 3600 s, freshest check 2026-11-01T11:00:00.25
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{time.Date(2026, 11, 1, 11, 30, 0, 0, time.UTC), "Fresh for 1 hour after its freshest check: current until 1 Nov (in 30 minutes)."},
		{time.Date(2027, 3, 26, 12, 0, 0, 0, time.UTC), "Fresh for 1 hour after its freshest check: stale since 1 Nov 2026, 144 days."},
	} {
		w, err := evalAt(v, instantOf(c.now))
		if err != nil {
			t.Fatal(err)
		}
		if got := freshnessText(v, w, c.now); got != c.want {
			t.Errorf("at %v:\n got %q\nwant %q", c.now, got, c.want)
		}
	}
}

// Rationale codes are said in words; a code this console does not know is
// still shown, as itself.
func TestRationaleInWords(t *testing.T) {
	got := rationaleOf([]string{"acceptance.accepted", "currency.stale_check", "verification.human", "brand.new_code"})
	want := []rationale{{"acceptance.accepted", "accepted"}, {"currency.stale_check", "the freshest check is too old"},
		{"verification.human", "checked by a person"}, {"brand.new_code", "brand.new_code"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v", got)
	}
}
