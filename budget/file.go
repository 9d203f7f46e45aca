package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of a budgets file.
const (
	MaxFileBytes = 1 << 20
	MaxEntries   = 10000 // agents and groups together
	MaxNameBytes = 128
	MaxLimit     = 1_000_000_000
)

// Limits are one budget's limits; nil is no limit.
type Limits struct {
	CallsPerMinute     *int64 `json:"calls_per_minute,omitempty"`
	HighRiskPerDay     *int64 `json:"high_risk_per_day,omitempty"`
	IrreversiblePerDay *int64 `json:"irreversible_per_day,omitempty"`
}

// Budgets is a parsed budgets file.
type Budgets struct {
	Agents  map[string]Limits
	Groups  map[string]Limits
	Default *Limits
}

// Error is a budgets file's problem: the field (a dotted path, e.g.
// "agents.bot.calls_per_minute") and the rule it breaks.
type Error struct {
	Field, Rule string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "budgets: " + e.Rule
	}
	return "budgets: " + e.Field + ": " + e.Rule
}

var topKeys = []string{"agents", "groups", "default"}

// Parse reads a budgets file; errors are *Error.
func Parse(raw []byte) (*Budgets, error) {
	if len(raw) > MaxFileBytes {
		return nil, &Error{"", fmt.Sprintf("the file is %d bytes, over the limit of %d", len(raw), MaxFileBytes)}
	}
	top, err := object(raw, "")
	if err != nil {
		return nil, err
	}
	if err := known(top, "", topKeys); err != nil {
		return nil, err
	}
	b := &Budgets{}
	if b.Agents, err = entries(top, "agents"); err != nil {
		return nil, err
	}
	if b.Groups, err = entries(top, "groups"); err != nil {
		return nil, err
	}
	if n := len(b.Agents) + len(b.Groups); n > MaxEntries {
		return nil, &Error{"", fmt.Sprintf("%d agents and groups, over the limit of %d", n, MaxEntries)}
	}
	if raw, ok := top["default"]; ok {
		l, err := limits(raw, "default")
		if err != nil {
			return nil, err
		}
		b.Default = &l
	}
	if len(b.Agents)+len(b.Groups) == 0 && b.Default == nil {
		return nil, &Error{"", `names no budget: give "agents", "groups" or "default"`}
	}
	return b, nil
}

// object decodes raw as a JSON object, member by member.
func object(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, &Error{field, "must be a JSON object" + detail(err)}
	}
	return m, nil
}

func detail(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

func known(m map[string]json.RawMessage, field string, keys []string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(keys, k) {
			return &Error{join(field, k), "unknown member (known: " + strings.Join(keys, ", ") + ")"}
		}
	}
	return nil
}

func join(field, k string) string {
	if field == "" {
		return k
	}
	return field + "." + k
}

// entries reads "agents" or "groups": names to limits.
func entries(top map[string]json.RawMessage, field string) (map[string]Limits, error) {
	raw, ok := top[field]
	if !ok {
		return nil, nil
	}
	m, err := object(raw, field)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Limits, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := checkName(name, field); err != nil {
			return nil, err
		}
		if out[name], err = limits(m[name], join(field, name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkName(name, field string) error {
	switch {
	case name == "" || len(name) > MaxNameBytes:
		return &Error{join(field, name), fmt.Sprintf("a name is 1 to %d bytes", MaxNameBytes)}
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return &Error{join(field, fmt.Sprintf("%q", name)), "a name is UTF-8 text with no control characters"}
	}
	return nil
}

var limitKeys = []string{"calls_per_minute", "high_risk_per_day", "irreversible_per_day"}

func limits(raw json.RawMessage, field string) (Limits, error) {
	m, err := object(raw, field)
	if err != nil {
		return Limits{}, err
	}
	if err := known(m, field, limitKeys); err != nil {
		return Limits{}, err
	}
	if len(m) == 0 {
		return Limits{}, &Error{field, "names no limit (give calls_per_minute, high_risk_per_day or irreversible_per_day)"}
	}
	var l Limits
	for i, dst := range []**int64{&l.CallsPerMinute, &l.HighRiskPerDay, &l.IrreversiblePerDay} {
		if v, ok := m[limitKeys[i]]; ok {
			if *dst, err = limit(v, join(field, limitKeys[i])); err != nil {
				return Limits{}, err
			}
		}
	}
	return l, nil
}

// limit is an integer 0..MaxLimit, spelt as one (not 1.0, not "1").
func limit(raw json.RawMessage, field string) (*int64, error) {
	var n int64
	t := bytes.TrimSpace(raw)
	if err := json.Unmarshal(t, &n); err != nil || string(t) == "null" || n < 0 || n > MaxLimit {
		if len(t) > 40 {
			t = append(t[:40:40], "…"...)
		}
		return nil, &Error{field, fmt.Sprintf("must be an integer from 0 to %d, got %s", MaxLimit, t)}
	}
	return &n, nil
}
