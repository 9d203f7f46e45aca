package auditchain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// MarshalDecision is json.Marshal(d), byte for byte
// (TestMarshalDecisionMatchesJSON), written field by field: a decision is
// encoded on every gate call, and reflection over its two dozen fields
// was the largest part of the server's cost of recording it. The fields
// of type any (the risk policy, the layers' details) still go through
// encoding/json.
func MarshalDecision(d *audit.Decision) ([]byte, error) {
	return AppendDecision(make([]byte, 0, 1536), d)
}

// AppendDecision appends MarshalDecision(d) to dst.
func AppendDecision(dst []byte, d *audit.Decision) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.str("decision_id", d.ID, false)
	if err := e.time("time", d.Time); err != nil {
		return nil, err
	}
	e.str("tool", d.Tool, false)
	e.key("caller")
	e.caller(&d.Caller)
	e.str("agent", d.Agent, true)
	e.strs("agent_groups", d.AgentGroups, true)
	e.str("proposition_id", d.PropositionID, true)
	e.str("view_id", d.ViewID, true)
	e.str("view_hash", d.ViewHash, true)
	e.str("action_id", d.ActionID, true)
	e.str("action_kind", d.ActionKind, true)
	e.str("risk", d.Risk, true)
	if d.Reversible != nil {
		e.key("reversible")
		e.b = strconv.AppendBool(e.b, *d.Reversible)
	}
	e.strs("concepts", d.Concepts, true)
	e.str("cardinality", d.Cardinality, true)
	if d.MinDepth != nil {
		e.key("min_depth")
		e.b = strconv.AppendInt(e.b, int64(*d.MinDepth), 10)
	}
	e.str("tool_name", d.ToolName, true)
	e.str("arguments_hash", d.ArgumentsHash, true)
	if len(d.Arguments) > 0 {
		if err := e.value("arguments", d.Arguments); err != nil {
			return nil, err
		}
	}
	if d.ArgumentsTruncated {
		e.key("arguments_truncated")
		e.b = append(e.b, "true"...)
	}
	if d.GraphVersion != 0 {
		e.key("graph_version")
		e.b = strconv.AppendInt(e.b, d.GraphVersion, 10)
	}
	e.strs("policy_ids", d.PolicyIDs, true)
	e.str("policy_set_hash", d.PolicySetHash, true)
	if err := e.value("risk_policy", d.RiskPolicy); err != nil {
		return nil, err
	}
	if len(d.Layers) > 0 {
		e.key("layers")
		if err := e.layers(d.Layers); err != nil {
			return nil, err
		}
	}
	e.str("outcome", string(d.Outcome), false)
	e.str("code", d.Code, true)
	e.str("message", d.Message, true)
	e.str("approval_id", d.ApprovalID, true)
	e.str("idempotency_key", d.IdempotencyKey, true)
	return append(e.b, '}'), nil
}

// encoder appends one JSON object's members; first tells whether the
// next member needs a comma.
type encoder struct {
	b    []byte
	next bool
}

func (e *encoder) key(k string) {
	if e.next {
		e.b = append(e.b, ',')
	}
	e.next = true
	e.b = append(append(append(e.b, '"'), k...), '"', ':')
}

func (e *encoder) str(k, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	e.key(k)
	e.b = audit.AppendJSONString(e.b, v)
}

// strs is a []string member: null when nil (without omitEmpty), omitted
// when empty (with it).
func (e *encoder) strs(k string, v []string, omitEmpty bool) {
	if omitEmpty && len(v) == 0 {
		return
	}
	e.key(k)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, s := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = audit.AppendJSONString(e.b, s)
	}
	e.b = append(e.b, ']')
}

// time is encoded as time.Time.MarshalJSON does, refusing what it
// refuses.
func (e *encoder) time(k string, t time.Time) error {
	if y := t.Year(); y < 0 || y >= 10000 {
		_, err := t.MarshalJSON()
		return fmt.Errorf("json: error calling MarshalJSON for type time.Time: %w", err)
	}
	e.key(k)
	e.b = append(t.AppendFormat(append(e.b, '"'), time.RFC3339Nano), '"')
	return nil
}

// value is a member of type any with omitempty: omitted when nil.
// audit.CompactJSON is copied as it is (it is json.Marshal's output
// already, which encoding/json would only scan again).
func (e *encoder) value(k string, v any) error {
	if v == nil {
		return nil
	}
	if c, ok := v.(audit.CompactJSON); ok && c != nil {
		e.key(k)
		e.b = append(e.b, c...)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.key(k)
	e.b = append(e.b, b...)
	return nil
}

func (e *encoder) caller(c *audit.Caller) {
	in := encoder{b: append(e.b, '{')}
	in.str("client_name", c.ClientName, true)
	in.str("client_version", c.ClientVersion, true)
	in.str("transport", c.Transport, false)
	in.str("remote_addr", c.RemoteAddr, true)
	in.str("role", c.Role, false)
	in.str("credential", c.Credential, true)
	e.b = append(in.b, '}')
}

func (e *encoder) layers(ls []audit.Layer) error {
	e.b = append(e.b, '[')
	for i := range ls {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		in := encoder{b: append(e.b, '{')}
		in.str("layer", ls[i].Layer, false)
		in.str("decision", string(ls[i].Decision), false)
		in.strs("reasons", ls[i].Reasons, false)
		if err := in.value("detail", ls[i].Detail); err != nil {
			return err
		}
		e.b = append(in.b, '}')
	}
	e.b = append(e.b, ']')
	return nil
}
