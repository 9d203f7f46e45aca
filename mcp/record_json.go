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
// the record's cost. Anything unusual (a string JSON escapes, a strength
// encoding/json would write in exponent form or refuse) goes through
// json.Marshal itself.
func axesJSON(a warrant.Axes) any {
	plain := plainFloat(a.Strength)
	for _, s := range append([]string{a.Acceptance, a.Conflict, a.Verification, a.Currency, a.Sufficiency}, a.RationaleCodes...) {
		plain = plain && plainString(s)
	}
	if !plain {
		return a
	}
	b := make([]byte, 0, 256)
	b = append(append(append(b, `{"acceptance":"`...), a.Acceptance...), `","conflict":"`...)
	b = append(append(b, a.Conflict...), `","verification":"`...)
	b = append(append(b, a.Verification...), `","currency":"`...)
	b = append(append(b, a.Currency...), `","sufficiency":"`...)
	b = append(append(b, a.Sufficiency...), `","strength":`...)
	b = strconv.AppendFloat(b, a.Strength, 'f', -1, 64)
	b = append(b, `,"rationale_codes":`...)
	if a.RationaleCodes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range a.RationaleCodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), c...), '"')
		}
		b = append(b, ']')
	}
	return audit.CompactJSON(append(b, '}'))
}

// plainString is a string encoding/json writes as it is between quotes:
// printable ASCII without a quote, a backslash or <, > and &.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainFloat is a float encoding/json writes in strconv's 'f' form.
func plainFloat(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	abs := math.Abs(f)
	return abs == 0 || (abs >= 1e-6 && abs < 1e21)
}
