package mcp

import (
	"encoding/json"
	"sync/atomic"

	"github.com/ewp-go/ewp/audit"

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
	raw audit.CompactJSON
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
	return audit.CompactJSON(raw)
}
