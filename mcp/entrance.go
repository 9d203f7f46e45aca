package mcp

import (
	"encoding/json"
	"strconv"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// What a recorded call (may_act, check_grounding) may bring into the
// decision log is bounded at the entrance, before anything is decoded,
// so that no caller, authenticated or not, can grow the log by more than
// a bounded amount per call: ten calls with a 1 MB approval_id once added
// 51 MB. A value over its bound is refused with EWP_REFUSE_LIMIT_EXCEEDED
// naming the field and the bound, and the refusal's record holds neither
// the value nor anything decoded after it.
const (
	// MaxIDBytes bounds, in UTF-8 bytes, each id and name of a recorded
	// call other than proposition_id and view_id: approval_id,
	// idempotency_key, the action's action_id, kind, risk, tool_name and
	// cardinality, each concept, risk_policy's policy_id and version,
	// evaluated_at; and the client's name and version from initialize.
	MaxIDBytes = 256
	// MaxConcepts bounds the concepts a recorded call names.
	MaxConcepts = 64
	// MaxRecordedMessageBytes bounds the message recorded with a refusal;
	// a longer one (it may quote argument names, which are not capped
	// otherwise) is recorded cut, with a note of how much was cut. The
	// caller's answer keeps the whole message.
	MaxRecordedMessageBytes = gate.MaxRecordedMessageBytes
	// MaxRecordBytes is what the bounds above give as the most one call
	// adds to the log with the default limits, every byte of what the
	// caller chose escaped by JSON as \u00XX (six bytes) and the grounding
	// layer reporting a gap per concept (TestOneCallAddsABoundedRecord).
	MaxRecordBytes = 1 << 20
)

// The texts of a recorded call bounded by MaxIDBytes, at the top level
// and in its action and risk_policy objects.
var (
	topTexts    = []string{"approval_id", "idempotency_key", "evaluated_at"}
	nestedTexts = map[string][]string{
		"action":      {"action_id", "kind", "risk", "tool_name", "cardinality"},
		"risk_policy": {"policy_id", "version"},
	}
)

// entrance refuses a recorded call's argument over its bound: the texts
// above; proposition_id and view_id over the kernel's MaxStringBytes (the
// bound the ledger holds ids to, so every stored proposition can still be
// named); more than MaxConcepts concepts, or one over MaxIDBytes.
func (s *Server) entrance(a args) error {
	idMax := effective(s.limits.MaxStringBytes, warrant.DefaultLimits.MaxStringBytes)
	if err := capTexts(a, "", MaxIDBytes, topTexts...); err != nil {
		return err
	}
	if err := capTexts(a, "", idMax, "proposition_id", "view_id"); err != nil {
		return err
	}
	if err := capConcepts(a, "concepts"); err != nil {
		return err
	}
	for _, parent := range []string{"action", "risk_policy"} {
		raw := a[parent]
		if len(raw) <= MaxIDBytes || raw[0] != '{' {
			continue // nothing in it can be over a bound (or the decoder refuses it)
		}
		obj, err := decodeObject(parent, raw)
		if err != nil {
			continue
		}
		if err := capTexts(obj, parent+".", MaxIDBytes, nestedTexts[parent]...); err != nil {
			return err
		}
		if err := capConcepts(obj, parent+".concepts"); err != nil {
			return err
		}
	}
	return nil
}

// capTexts refuses the first of names in a whose text is over max bytes.
func capTexts(a args, prefix string, max int, names ...string) error {
	for _, name := range names {
		if n := textLen(a[name], max); n > max {
			return overBound(prefix+name, n, max)
		}
	}
	return nil
}

// capConcepts refuses a concepts list (field names it in full) with more
// than MaxConcepts entries or an entry over MaxIDBytes.
func capConcepts(a args, field string) error {
	raw := a["concepts"]
	if len(raw) <= MaxIDBytes || raw[0] != '[' {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	if len(list) > MaxConcepts {
		return refuse(warrant.CodeLimitExceeded, field, "names %d concepts; a call names at most %d (%s)", len(list), MaxConcepts, entranceNote)
	}
	for i, item := range list {
		if n := textLen(item, MaxIDBytes); n > MaxIDBytes {
			return overBound(field+"["+strconv.Itoa(i)+"]", n, MaxIDBytes)
		}
	}
	return nil
}

// textLen is the length of the text raw holds: a string's decoded bytes,
// a number's literal (as an id reads it); 0 for anything else, which the
// decoder refuses by name. A JSON text is never shorter than the valid
// UTF-8 string it holds (the call's text was checked before), so one of
// at most max bytes is not decoded.
func textLen(raw json.RawMessage, max int) int {
	switch {
	case len(raw) <= max:
		return len(raw)
	case raw[0] == '"':
		s, err := unquote(raw)
		if err != nil {
			return 0
		}
		return len(s)
	case isNumber(raw):
		return len(raw)
	}
	return 0
}

// entranceNote says whose bound it is, so the refusal is not read as one
// of the view limits an operator can raise (withLimitHint).
const entranceNote = "a fixed bound on what one call may add to the decision log"

func overBound(field string, n, max int) error {
	return refuse(warrant.CodeLimitExceeded, field, "is %d bytes long; this server takes at most %d bytes here (%s)", n, max, entranceNote)
}

// clientInfoProblem refuses an initialize whose clientInfo name or
// version is over MaxIDBytes: the session keeps them and every decision
// of the session records them.
func clientInfoProblem(m message, p message) string {
	if m.method() != "initialize" || len(p["clientInfo"]) <= MaxIDBytes {
		return ""
	}
	info, err := decodeObject("params.clientInfo", p["clientInfo"])
	if err != nil {
		return "" // mcp-go refuses it
	}
	if err := capTexts(info, "params.clientInfo.", MaxIDBytes, "name", "version"); err != nil {
		return err.Error()
	}
	return ""
}
