package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

// decodeGuardAction reads the guard fields of an action. ok is false when
// the action names no concepts: the guard then does not judge it, and any
// other guard field is refused, since it would be silently ignored.
func decodeGuardAction(fields map[string]json.RawMessage) (act gate.GuardAction, ok bool, err error) {
	a := args(fields)
	if !a.has("concepts") {
		for _, k := range gate.GuardActionKeys {
			if a.has(k) {
				return act, false, refuse(warrant.CodeInvalidAction, "action."+k,
					"is only read together with action.concepts (the concepts the action touches); add them or drop %s", k)
			}
		}
		return act, false, nil
	}
	if act.Concepts, _, err = a.strings("action", "concepts"); err != nil {
		return act, false, asActionError(err)
	}
	if err := decodeGuardOptional(&act, a); err != nil {
		return act, false, asActionError(err)
	}
	return act, true, nil
}

func decodeGuardOptional(act *gate.GuardAction, a args) error {
	var err error
	if act.MinDepth, err = optionalLevel(a, "action", "min_depth"); err != nil {
		return err
	}
	card, has, err := a.str("action", "cardinality")
	if err != nil {
		return err
	}
	if has && card != edgepolicy.CardinalitySingle && card != edgepolicy.CardinalityMultiple {
		return badArg("action.cardinality", "must be \"single\" or \"multiple\"; got %q (omit it when unknown: every policy then applies)", card)
	}
	act.Cardinality = card
	tool, has, err := a.str("action", "tool_name")
	if err == nil && has && tool == "" {
		err = badArg("action.tool_name", "must be a non-empty string (the tool you are about to call)")
	}
	if err != nil {
		return err
	}
	act.ToolName = tool
	act.Arguments, err = toolArguments(a)
	return err
}

// toolArguments decodes action.arguments with numbers kept exact
// (json.Number), so a policy compares the value the agent sent.
func toolArguments(a args) (map[string]any, error) {
	if _, has, err := a.object("action", "arguments"); err != nil || !has {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(a["arguments"]))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, badArg("action.arguments", "is not a JSON object: %v", err)
	}
	return m, nil
}

// optionalLevel reads an optional depth level: an integer literal 0..4.
func optionalLevel(a args, field, name string) (*int, error) {
	l, err := level(a, field, name)
	if err != nil || l == nil {
		return nil, err
	}
	n := int(*l)
	return &n, nil
}

// level reads a depth level; nil when missing. "2", 2.0 and true are
// refused: a level is never coerced.
func level(a args, field, name string) (*grounding.DepthLevel, error) {
	raw, ok := a[name]
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || !isIntLiteral(raw) || n < 0 || n > int(grounding.MaxLevel) {
		return nil, badArg(join(field, name), "must be a depth level, an integer from 0 (EXISTENCE) to 4 (IMPLICATIONS); got %s", describe(raw))
	}
	l := grounding.DepthLevel(n)
	return &l, nil
}
