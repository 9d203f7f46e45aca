package gate

import (
	"fmt"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// CheckSkew refuses an evaluated_at (as the caller sent it, "" for none)
// that is unparseable or more than MaxEvaluatedAtSkew from now: a caller
// must not move the gate's clock, which it always decides at.
func CheckSkew(evaluatedAt string, now time.Time) error {
	if evaluatedAt == "" {
		return nil
	}
	within, parsed := withinSkew(evaluatedAt, now, MaxEvaluatedAtSkew)
	if !parsed {
		return refusal(warrant.CodeEvaluatedAtSkew, "evaluated_at",
			"%q is not a parseable instant; omit evaluated_at, may_act decides at the server clock", evaluatedAt)
	}
	if !within {
		return refusal(warrant.CodeEvaluatedAtSkew, "evaluated_at",
			"%q is more than %d s from the server clock (%s); omit it, may_act decides at the server clock",
			evaluatedAt, int(MaxEvaluatedAtSkew.Seconds()), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// CheckLatest refuses a view_id ("" for none) that is not latest, the
// newest snapshot of pid: an action must rest on the newest evidence.
func CheckLatest(pid, viewID string, latest *warrant.View) error {
	if viewID == "" || viewID == latest.ViewID {
		return nil
	}
	return refusal(warrant.CodeStaleViewForAction, "view_id",
		"%q is not the latest snapshot of %q (the latest is %q); re-read the evidence before acting",
		viewID, pid, latest.ViewID)
}

// withinSkew reports whether instant t lies within skew of now; ok is false
// when t is not an instant the kernel accepts (EWP.md §3's grammar is the
// kernel's, so it is never re-implemented here).
func withinSkew(t string, now time.Time, skew time.Duration) (within, ok bool) {
	at, ok := warrant.ParseInstant(t)
	if !ok {
		return false, false
	}
	ref, _ := warrant.ParseInstant(now.UTC().Format(time.RFC3339Nano)) // RFC 3339 always parses
	diff := at.Sub(ref)
	limit := skew.Microseconds()
	return diff <= limit && diff >= -limit, true
}

func refusal(code, field, rule string, args ...any) *warrant.Error {
	return &warrant.Error{Code: code, Field: field, Rule: fmt.Sprintf(rule, args...)}
}
