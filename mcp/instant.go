package mcp

import (
	"encoding/json"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// The instant grammar of EWP.md §3 (CPython's fromisoformat) belongs to the
// kernel, which does not export its parser. Rather than keep a second,
// drifting copy here, the server asks the kernel through Evaluate on a
// one-assertion probe view: a record is available at T exactly when its
// time is parseable and not after T, so availability answers "a <= b" in
// the kernel's own terms. If the kernel ever exports its parser, these two
// functions are the only place to change.

// parseable reports whether t is an instant the kernel accepts as
// evaluated_at; the error is the kernel's refusal when it is not.
func parseable(t string) error {
	_, err := notAfter(t, t)
	return err
}

// notAfter reports whether instant a is at or before instant b. b must be
// parseable (the error is the kernel's refusal when it is not); an
// unparseable a is never "not after" anything.
func notAfter(a, b string) (bool, error) {
	v, err := warrant.DecodeView(probeView(a))
	if err != nil {
		return false, err
	}
	w, err := warrant.Evaluate(v, b)
	if err != nil {
		return false, err
	}
	return w.Warrant.Acceptance != warrant.Unaccepted, nil
}

// probeView is a minimal valid view with one assertion made at t.
func probeView(t string) []byte {
	at, _ := json.Marshal(t) // a string always marshals
	return []byte(`{"proposition_id": "probe", "assertions": [{"assertion_id": "a",
		"text": "probe", "asserted_by": "ewp-mcp", "assertion_confidence": 1,
		"asserted_at": ` + string(at) + `, "source": {"source_id": "s", "lineage_id": "s",
		"origin_type": "turn", "origin_locator": "probe", "snapshot_id": "s",
		"content_hash": "probe", "observed_at": ` + string(at) + `}}]}`)
}

// withinSkew reports whether instant t lies within skew of now. t must be
// parseable.
func withinSkew(t string, now time.Time, skew time.Duration) (bool, error) {
	if err := parseable(t); err != nil {
		return false, err
	}
	latest := now.Add(skew).UTC().Format(time.RFC3339Nano)
	earliest := now.Add(-skew).UTC().Format(time.RFC3339Nano)
	early, err := notAfter(t, latest)
	if err != nil || !early {
		return false, err
	}
	return notAfter(earliest, t)
}
