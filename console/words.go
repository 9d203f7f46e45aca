package console

import (
	"fmt"
	"time"

	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/warrant"
)

// rationaleWords says each rationale code the kernel emits in words. The
// codes stay on the page (as each phrase's tooltip): they are what the
// MCP answers carry, so an operator can match one to the other.
var rationaleWords = map[string]string{
	"acceptance.accepted":               "accepted",
	"acceptance.tentative":              "accepted tentatively",
	"acceptance.none":                   "not accepted",
	"conflict.resolved":                 "a conflict was resolved",
	"conflict.open":                     "an open conflict",
	"conflict.implied_polarity":         "evidence points both ways",
	"currency.superseded":               "superseded by newer evidence",
	"currency.stale_check":              "the freshest check is too old",
	"sufficiency.degraded":              "retrieval was degraded",
	"sufficiency.none":                  "not enough evidence",
	"verification.human":                "checked by a person",
	"verification.external":             "checked by an external source",
	"verification.indirect":             "checked only indirectly",
	"verification.none":                 "not checked",
	"verification.inconclusive_present": "a check was inconclusive",
	"verification.laundered_endogenous": "a check only repeats the claim's own source",
	"verification.not_available_at_t":   "a check is dated later than now",
	"verification.opposing_check":       "a check opposes the claim",
	"availability.future_assertion":     "an assertion is dated later than now",
	"availability.future_evidence":      "evidence is dated later than now",
}

// rationale is one code with its words, for the template.
type rationale struct{ Code, Words string }

// rationaleOf says codes in words; a code this console does not know (a
// newer kernel's) is shown as itself rather than hidden.
func rationaleOf(codes []string) []rationale {
	out := make([]rationale, 0, len(codes))
	for _, c := range codes {
		w, ok := rationaleWords[c]
		if !ok {
			w = c
		}
		out = append(out, rationale{Code: c, Words: w})
	}
	return out
}

// humanDuration says a duration in its largest whole unit: "30 days",
// "1 hour", "45 seconds". Policies and ages are read at a glance, not to
// the second (the exact figure stays in the tooltip).
func humanDuration(d time.Duration) string {
	d = d.Abs()
	switch {
	case d >= 24*time.Hour:
		return plural.Count(int64(d/(24*time.Hour)), "day", "days")
	case d >= time.Hour:
		return plural.Count(int64(d/time.Hour), "hour", "hours")
	case d >= time.Minute:
		return plural.Count(int64(d/time.Minute), "minute", "minutes")
	}
	return plural.Count(int64(d/time.Second), "second", "seconds")
}

// shortDate is a day for people: "10 Jul", with the year when it is not
// now's.
func shortDate(t, now time.Time) string {
	if t.UTC().Year() == now.UTC().Year() {
		return t.UTC().Format("2 Jan")
	}
	return t.UTC().Format("2 Jan 2006")
}

// freshnessText says a view's freshness policy and where its warrant
// stands against it: "stale since 10 Jul, 144 days", "current until
// 3 Aug (in 2 days)", or why neither applies.
func freshnessText(v *warrant.View, w *warrant.WarrantView, now time.Time) string {
	policy := "Fresh for " + humanDuration(time.Duration(v.Freshness)*time.Second) + " after its freshest check"
	at, ok := staleAt(v, w)
	switch {
	case w.FreshestCheck == nil:
		return policy + "; there is no check yet to age."
	case !ok:
		return policy + "."
	case w.Stale:
		since := timeOf(at)
		return fmt.Sprintf("%s: stale since %s, %s.", policy, shortDate(since, now), humanDuration(now.Sub(since)))
	}
	until := timeOf(at)
	return fmt.Sprintf("%s: current until %s (in %s).", policy, shortDate(until, now), humanDuration(until.Sub(now)))
}

// countFunc is the templates' "count": count 1 "stretch" "stretches".
func countFunc(n any, one, many string) string {
	switch x := n.(type) {
	case int:
		return plural.Count(x, one, many)
	case int64:
		return plural.Count(x, one, many)
	}
	return fmt.Sprint(n) + " " + many
}

// wordsFunc is the templates' "rationale".
func wordsFunc(codes []string) []rationale { return rationaleOf(codes) }
