package console

import (
	"math"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// unix0001 is 0001-01-01T00:00:00Z in Unix seconds: warrant.Instant
// counts microseconds from there.
const unix0001 = -62135596800

func instantOf(t time.Time) warrant.Instant {
	return warrant.Instant((t.Unix()-unix0001)*1_000_000 + int64(t.Nanosecond()/1000))
}

func timeOf(i warrant.Instant) time.Time {
	us := int64(i)
	sec, frac := us/1_000_000, us%1_000_000
	if frac < 0 {
		sec, frac = sec-1, frac+1_000_000
	}
	return time.Unix(sec+unix0001, frac*1000).UTC()
}

// evalAt evaluates v at instant t (the kernel takes the instant as text).
func evalAt(v *warrant.View, t warrant.Instant) (*warrant.WarrantView, error) {
	return warrant.Evaluate(v, t.String())
}

// nextChange is the first instant after t at which v's warrant may differ
// from w (its warrant at t), and false when it never will. Between t and
// then, the axes are exactly w's: availability of records changes only at
// their own timestamps, and the clock acts only through staleness, which
// starts the first microsecond the freshest check's age exceeds
// freshness_policy_seconds (EWP: age > limit).
func nextChange(v *warrant.View, w *warrant.WarrantView, t warrant.Instant) (warrant.Instant, bool) {
	var best warrant.Instant
	found := false
	consider := func(at warrant.Instant) {
		if at > t && (!found || at < best) {
			best, found = at, true
		}
	}
	stamp := func(ts string) {
		if at, ok := warrant.ParseInstant(ts); ok {
			consider(at)
		}
	}
	for i := range v.Assertions {
		stamp(v.Assertions[i].AssertedAt)
	}
	for i := range v.Evidence {
		stamp(v.Evidence[i].ObservedAt)
	}
	for i := range v.Checks {
		stamp(v.Checks[i].ObservedAt)
	}
	if at, ok := staleAt(v, w); ok && !w.Stale {
		consider(at + 1)
	}
	return best, found
}

// staleAt is the instant the view's freshest check (as of w) reaches
// freshness_policy_seconds of age: the view is STALE from the next
// microsecond on. False when w has no freshest check or the limit lies
// beyond representable time.
func staleAt(v *warrant.View, w *warrant.WarrantView) (warrant.Instant, bool) {
	if w.FreshestCheck == nil {
		return 0, false
	}
	for i := range v.Checks {
		c := &v.Checks[i]
		if c.CheckID != *w.FreshestCheck {
			continue
		}
		at, ok := warrant.ParseInstant(c.ObservedAt)
		if !ok || v.Freshness < 0 || v.Freshness > (math.MaxInt64-int64(at))/1_000_000 {
			return 0, false
		}
		return at + warrant.Instant(v.Freshness*1_000_000), true
	}
	return 0, false
}

// datedView is a snapshot with its body, for the timeline.
type datedView struct {
	Info SnapshotInfo
	View *warrant.View
}

// segment is a stretch of time over which a proposition's warrant is one
// set of axes: the snapshot then latest, evaluated at any instant inside.
type segment struct {
	From, To warrant.Instant
	ViewID   string
	Axes     warrant.Axes
	// StaleFrom is set on a segment that starts because the freshest
	// check aged past the policy: the exact instant currency turned STALE.
	StaleAt warrant.Instant
}

// maxSegments bounds a timeline (a view with thousands of dated records
// would otherwise draw thousands of slivers).
const maxSegments = 2000

// timeline evaluates each snapshot from its creation until the next one
// was stored, and the latest until now (the first from its earliest
// record, when that is older than its storage: evidence ingested today
// may have been observed months ago, and a chart of storage time alone
// would show only the last seconds of a fresh ledger), splitting a snapshot's stretch
// wherever its warrant changes (nextChange), so every change, including
// the moment currency turns STALE, appears at its exact instant.
func timeline(views []datedView, now warrant.Instant) ([]segment, error) {
	var out []segment
	for i, dv := range views {
		start := instantOf(dv.Info.CreatedAt)
		if i == 0 {
			start = min(start, earliestRecord(dv.View, start))
		}
		end := now
		if i+1 < len(views) {
			end = instantOf(views[i+1].Info.CreatedAt)
		}
		for t := start; t < end && len(out) < maxSegments; {
			w, err := evalAt(dv.View, t)
			if err != nil {
				return nil, err
			}
			stop := end
			if nc, ok := nextChange(dv.View, w, t); ok && nc < end {
				stop = nc
			}
			seg := segment{From: t, To: stop, ViewID: dv.Info.ViewID, Axes: w.Warrant}
			if sa, ok := staleAt(dv.View, w); ok && w.Stale && sa+1 == t {
				seg.StaleAt = sa
			}
			out = appendSegment(out, seg)
			t = stop
		}
	}
	return out, nil
}

// appendSegment merges a segment into the previous one when nothing but
// time separates them (same snapshot, same axes).
func appendSegment(out []segment, s segment) []segment {
	if n := len(out); n > 0 && s.StaleAt == 0 {
		p := &out[n-1]
		if p.ViewID == s.ViewID && p.To == s.From && sameAxes(p.Axes, s.Axes) {
			p.To = s.To
			return out
		}
	}
	return append(out, s)
}

func sameAxes(a, b warrant.Axes) bool {
	return a.Acceptance == b.Acceptance && a.Conflict == b.Conflict && a.Verification == b.Verification &&
		a.Currency == b.Currency && a.Sufficiency == b.Sufficiency
}

// earliestRecord is the earliest dated record of v (assertion, evidence
// or check), or def when it has none.
func earliestRecord(v *warrant.View, def warrant.Instant) warrant.Instant {
	out := def
	stamp := func(ts string) {
		if at, ok := warrant.ParseInstant(ts); ok && at < out {
			out = at
		}
	}
	for i := range v.Assertions {
		stamp(v.Assertions[i].AssertedAt)
	}
	for i := range v.Evidence {
		stamp(v.Evidence[i].ObservedAt)
	}
	for i := range v.Checks {
		stamp(v.Checks[i].ObservedAt)
	}
	return out
}
