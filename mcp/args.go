package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// args is the argument object of one tool call, kept as raw JSON per key so
// every value is checked by this server (never by a client-side schema)
// and an inline view reaches the kernel as the exact text the caller sent.
// A key whose value is JSON null is dropped: null means missing.
type args map[string]json.RawMessage

// rawArguments returns the JSON text of req's arguments (decodeObject
// reads them; they must be an object or absent). RawArguments is
// preferred because it keeps number literals exactly as sent; in-process
// calls only have the decoded value.
func rawArguments(req mcpgo.CallToolRequest) ([]byte, error) {
	raw := []byte(req.Params.RawArguments)
	if len(raw) == 0 && req.Params.Arguments != nil {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return nil, badArg("arguments", "cannot be encoded as JSON: %v", err)
		}
	}
	return raw, nil
}

// decodeObject decodes raw as a JSON object with null members dropped.
// Empty input and null are the empty object. raw is always part of a
// message that was validated as a whole (the pre-filter's, or mcp-go's
// decoding of it), so it is split without another validation pass.
func decodeObject(field string, raw []byte) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	if raw[0] != '{' {
		return nil, badArg(field, "must be a JSON object; got %s", kindOf(raw))
	}
	m, ok := splitObject(raw)
	if !ok {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, badArg(field, "is not valid JSON: %v", err)
		}
	}
	for k, v := range m {
		if string(v) == "null" {
			delete(m, k)
		}
	}
	return args(m), nil
}

// only refuses any key not in allowed, naming the keys that are allowed,
// so a typo such as "evaluatedAt" is caught instead of silently ignored.
func (a args) only(field string, allowed []string) error {
	var unknown []string
	for k := range a {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	where := field
	if where == "" {
		where = unknown[0]
	} else {
		where += "." + unknown[0]
	}
	return badArg(where, "unknown argument %s; accepted: %s",
		strings.Join(unknown, ", "), strings.Join(allowed, ", "))
}

func (a args) has(name string) bool {
	_, ok := a[name]
	return ok
}

// id reads an identifier: a non-empty string, or a number read as its
// decimal text the way the EvidenceView decoder reads ids. ok is false
// when the key is missing.
func (a args) id(field, name string) (string, bool, error) {
	raw, ok := a[name]
	if !ok {
		return "", false, nil
	}
	s, err := scalarText(raw)
	if err != nil {
		return "", true, badArg(join(field, name), "must be a non-empty string; %v", err)
	}
	if s == "" {
		return "", true, badArg(join(field, name), "must be a non-empty string; got \"\"")
	}
	return s, true, nil
}

// requiredID is id with a refusal when the key is missing.
func (a args) requiredID(field, name string) (string, error) {
	s, ok, err := a.id(field, name)
	if err == nil && !ok {
		err = badArg(join(field, name), "is required (a non-empty string)")
	}
	return s, err
}

// text reads a free-text value (a string, or a number as its text). An
// empty string is allowed.
func (a args) text(field, name string) (string, bool, error) {
	raw, ok := a[name]
	if !ok {
		return "", false, nil
	}
	s, err := scalarText(raw)
	if err != nil {
		return "", true, badArg(join(field, name), "must be a string; %v", err)
	}
	return s, true, nil
}

// str reads a value that must be a JSON string: enums and other policy
// fields are never coerced.
func (a args) str(field, name string) (string, bool, error) {
	raw, ok := a[name]
	if !ok {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", true, badArg(join(field, name), "must be a string; got %s", kindOf(raw))
	}
	s, err := unquote(raw)
	if err != nil {
		return "", true, badArg(join(field, name), "must be a string; got %s", kindOf(raw))
	}
	return s, true, nil
}

// boolean reads a JSON true/false; def when missing.
func (a args) boolean(field, name string, def bool) (bool, error) {
	raw, ok := a[name]
	if !ok {
		return def, nil
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badArg(join(field, name), "must be true or false; got %s", kindOf(raw))
}

// integer reads a JSON integer literal within [lo, hi]; def when missing.
// 10.0, "10" and true are refused, as the protocol refuses them for
// freshness_policy_seconds.
func (a args) integer(name string, lo, hi, def int) (int, error) {
	raw, ok := a[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || !isIntLiteral(raw) {
		return 0, badArg(name, "must be an integer from %d to %d; got %s", lo, hi, describe(raw))
	}
	if n < lo || n > hi {
		return 0, badArg(name, "must be an integer from %d to %d; got %d", lo, hi, n)
	}
	return n, nil
}

// object reads a nested JSON object; ok is false when missing.
func (a args) object(field, name string) (args, bool, error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if raw[0] != '{' {
		return nil, true, badArg(join(field, name), "must be a JSON object; got %s", kindOf(raw))
	}
	obj, err := decodeObject(join(field, name), raw)
	return obj, true, err
}

// strings reads a list of non-empty strings (subjects and the like: a bare
// string is never read as a list of characters).
func (a args) strings(field, name string) ([]string, bool, error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	var list []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		return nil, true, badArg(join(field, name), "must be a list of non-empty strings; got %s", kindOf(raw))
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		var s string
		if len(item) == 0 || item[0] != '"' || json.Unmarshal(item, &s) != nil || s == "" {
			return nil, true, badArg(join(field, name)+"["+strconv.Itoa(i)+"]",
				"must be a non-empty string; got %s", describe(item))
		}
		out = append(out, s)
	}
	return out, true, nil
}

// number reads a finite JSON number, as float() would read it.
func (a args) number(field, name string) (float64, bool, error) {
	raw, ok := a[name]
	if !ok {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if !isNumber(raw) || err != nil || math.IsInf(f, 0) {
		return 0, true, badArg(join(field, name), "must be a finite number; got %s", describe(raw))
	}
	return f, true, nil
}

// unquote decodes a JSON string. Arguments arrive as valid JSON, and a
// string of plain ASCII (no escapes) is its own text between the quotes,
// so the common case needs no decoder.
func unquote(raw json.RawMessage) (string, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainASCII(raw) {
		return string(raw[1 : n-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// scalarText converts a string or a number to text; anything else is an
// error describing what was found.
func scalarText(raw json.RawMessage) (string, error) {
	switch {
	case raw[0] == '"':
		return unquote(raw)
	case isNumber(raw):
		if s, ok := numberText(string(raw)); ok {
			return s, nil
		}
		return "", fmt.Errorf("got a number too large to hold (%s)", clip(string(raw)))
	}
	return "", fmt.Errorf("got %s", kindOf(raw))
}

// numberText renders a JSON number literal the way Python's str() renders
// the value json.loads gives: integers exactly, floats in repr form.
func numberText(lit string) (string, bool) {
	if !strings.ContainsAny(lit, ".eE") {
		var z big.Int
		if _, ok := z.SetString(lit, 10); !ok {
			return "", false
		}
		return z.String(), true
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", false
	}
	return pyFloatRepr(f), true
}

// pyFloatRepr is Python's repr(float): shortest round-trip digits, fixed
// notation for exponents -4..15, otherwise d.ddde±XX.
func pyFloatRepr(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= 16 {
		return mant + "e" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

func isIntLiteral(raw json.RawMessage) bool {
	return isNumber(raw) && !bytes.ContainsAny(raw, ".eE")
}

// kindOf names the JSON type of raw for messages.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case isNumber(raw):
		return "a number"
	}
	return "invalid JSON"
}

// describe is kindOf plus the value itself when it is short, so a caller
// sees exactly what was refused.
func describe(raw []byte) string {
	k := kindOf(raw)
	if k == "an object" || k == "an array" || len(raw) > 40 {
		return k
	}
	return k + " (" + string(raw) + ")"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}
