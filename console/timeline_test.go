package console

import (
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

const staleView = `{"proposition_id": "P-x", "view_id": "v1", "freshness_policy_seconds": 3600,
 "assertions": [{"assertion_id": "a1", "text": "x holds", "asserted_by": "assistant", "assertion_confidence": 0.9,
   "asserted_at": "2026-11-01T10:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn",
   "origin_locator": "chat", "snapshot_id": "c@1", "content_hash": "sha256:1", "observed_at": "2026-11-01T10:00:00Z"}}],
 "checks": [{"check_id": "k1", "method": "human_review", "scope": "x", "result": "supports",
   "observed_at": "2026-11-01T11:00:00.250000Z", "source": {"source_id": "s2", "lineage_id": "L2", "origin_type": "human",
   "origin_locator": "review", "snapshot_id": "r@1", "content_hash": "sha256:2", "observed_at": "2026-11-01T11:00:00Z"}}]}`

func mustView(t *testing.T, s string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The STALE crossing is where the kernel itself turns: one microsecond
// after the freshest check is exactly freshness_policy_seconds old, not at
// some sampled instant near it.
func TestTimelineStaleCrossingExact(t *testing.T) {
	v := mustView(t, staleView)
	created := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	now := instantOf(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	segs, err := timeline([]datedView{{Info: SnapshotInfo{ViewID: "v1", CreatedAt: created}, View: v}}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 1, 12, 0, 0, 250000000, time.UTC) // check + 3600 s
	var crossing *segment
	for i := range segs {
		if segs[i].StaleAt != 0 {
			crossing = &segs[i]
		}
	}
	if crossing == nil {
		t.Fatalf("no STALE crossing in %+v", segs)
	}
	if got := timeOf(crossing.StaleAt); !got.Equal(want) {
		t.Fatalf("STALE crossing at %v, want %v", got, want)
	}
	// The kernel agrees on both sides of it.
	at := func(i warrant.Instant) string {
		w, err := evalAt(v, i)
		if err != nil {
			t.Fatal(err)
		}
		return w.Warrant.Currency
	}
	if at(crossing.StaleAt) != warrant.Current || at(crossing.StaleAt+1) != warrant.Stale {
		t.Fatalf("kernel at crossing: %s then %s, want CURRENT then STALE", at(crossing.StaleAt), at(crossing.StaleAt+1))
	}
	// Segments tile the span from creation to now without gaps, and each
	// carries the warrant the kernel gives anywhere inside it.
	if segs[0].From != instantOf(created) || segs[len(segs)-1].To != now {
		t.Fatalf("segments span %v..%v", timeOf(segs[0].From), timeOf(segs[len(segs)-1].To))
	}
	for i, s := range segs {
		if i > 0 && segs[i-1].To != s.From {
			t.Fatalf("gap between segments %d and %d", i-1, i)
		}
		mid := s.From + (s.To-s.From)/2
		w, _ := evalAt(v, mid)
		if !sameAxes(w.Warrant, s.Axes) {
			t.Fatalf("segment %d (%v..%v) says %+v, kernel at its middle says %+v", i, timeOf(s.From), timeOf(s.To), s.Axes, w.Warrant)
		}
	}
	// Before the assertion and the check exist the view is not accepted;
	// the first segment must show that, not the later state.
	if segs[0].Axes.Acceptance == warrant.Accepted {
		t.Fatalf("first segment (before any record) already ACCEPTED")
	}
}

// A later snapshot ends the earlier one's stretch.
func TestTimelineSnapshotsHandOver(t *testing.T) {
	v := mustView(t, staleView)
	t1 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	t2 := time.Date(2026, 11, 1, 11, 30, 0, 0, time.UTC)
	now := instantOf(t2.Add(time.Hour))
	segs, err := timeline([]datedView{{SnapshotInfo{ViewID: "v1", CreatedAt: t1}, v}, {SnapshotInfo{ViewID: "v2", CreatedAt: t2}, v}}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.ViewID == "v1" && s.To > instantOf(t2) {
			t.Fatalf("v1's stretch runs past v2's creation")
		}
	}
	if segs[len(segs)-1].ViewID != "v2" {
		t.Fatalf("the last stretch is not the latest snapshot's")
	}
}

func TestInstantRoundTrip(t *testing.T) {
	for _, s := range []string{"2026-11-01T11:00:00.250000Z", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00.000001Z", "9999-12-31T23:59:59.999999Z"} {
		i, ok := warrant.ParseInstant(s)
		if !ok {
			t.Fatal(s)
		}
		if got := instantOf(timeOf(i)); got != i {
			t.Errorf("%s: round trip %v != %v", s, got, i)
		}
	}
}
