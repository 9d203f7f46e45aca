package mcp

import (
	"encoding/json"
	"math"
	"strconv"
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

// axesJSON is the warrant's axes as json.Marshal writes them, for the
// record (TestAxesJSONMatchesMarshal): written field by field, since every
// recorded may_act carries them and reflection over them was a tenth of
// the record's cost. A strength encoding/json would write in exponent
// form or refuse goes through json.Marshal itself.
func axesJSON(a warrant.Axes) any {
	if !plainFloat(a.Strength) {
		return a
	}
	b := append(make([]byte, 0, 384), '{')
	for i, f := range []struct{ k, v string }{{"acceptance", a.Acceptance}, {"conflict", a.Conflict},
		{"verification", a.Verification}, {"currency", a.Currency}, {"sufficiency", a.Sufficiency}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = audit.AppendJSONString(append(audit.AppendJSONString(b, f.k), ':'), f.v)
	}
	b = strconv.AppendFloat(append(b, `,"strength":`...), a.Strength, 'f', -1, 64)
	b = append(b, `,"rationale_codes":`...)
	if a.RationaleCodes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range a.RationaleCodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = audit.AppendJSONString(b, c)
		}
		b = append(b, ']')
	}
	return audit.CompactJSON(append(b, '}'))
}

// plainFloat is a float encoding/json writes in strconv's 'f' form.
func plainFloat(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	abs := math.Abs(f)
	return abs == 0 || (abs >= 1e-6 && abs < 1e21)
}
