package mcp

import (
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// withinSkew reports whether instant t lies within skew of now; ok is false
// when t is not an instant the kernel accepts (EWP.md §3's grammar is the
// kernel's, so it is never re-implemented here).
func withinSkew(t string, now time.Time, skew time.Duration) (within, ok bool) {
	at, ok := warrant.ParseInstant(t)
	if !ok {
		return false, false
	}
	ref, _ := warrant.ParseInstant(now.UTC().Format(timeLayout)) // RFC 3339 always parses
	diff := at.Sub(ref)
	limit := skew.Microseconds()
	return diff <= limit && diff >= -limit, true
}
