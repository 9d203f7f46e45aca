package mcp

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/ewp-go/ewp/warrant"
)

// riskPolicies keeps the JSON of the last risk policy a decision was
// recorded under. Nearly every call is judged under the same one (the
// default; only an ingest caller may send another), and encoding it by
// reflection on every record was a tenth of the record's cost. The
// record reads back the same either way: a JSON object.
type riskPolicies struct {
	last atomic.Pointer[encodedPolicy]
}

type encodedPolicy struct {
	p   warrant.RiskPolicy
	raw json.RawMessage
}

// encoded returns p as the decision records it: its cached JSON when p is
// the policy seen last, else p itself encoded now (and kept).
func (c *riskPolicies) encoded(p warrant.RiskPolicy) any {
	if e := c.last.Load(); e != nil && e.p == p {
		return e.raw
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return p // cannot happen for strings and bools; the record encodes p itself
	}
	c.last.Store(&encodedPolicy{p: p, raw: raw})
	return json.RawMessage(raw)
}

// encodedForRecord returns v encoded as JSON when the call's decision is
// being recorded, so the answer and the record, which both carry v, share
// one encoding; otherwise v as it is.
func encodedForRecord(ctx context.Context, v any) any {
	if draftFrom(ctx) == nil {
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(raw)
}
