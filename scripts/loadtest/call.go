package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The tools -tool can drive.
const (
	toolWarrantNow = "warrant_now"
	toolMayAct     = "may_act"
)

// mayActRisk is the risk of the action every may_act call asks about. The
// synthetic views (snapshot 0 of each proposition) are ACCEPTED, have no
// open conflict and stay CURRENT for a year after their September 2026
// evidence, so a reversible medium-risk action is MAY_ACT, and medium
// (unlike low) makes the warrant layer weigh acceptance and currency.
// may_act decides at the server clock: from September 2027 the views are
// STALE, the answer REQUIRE_CONFIRMATION, and every call is rejected as
// unexpected rather than measured as a different decision.
const mayActRisk = "medium"

// A call is what every client asks, and what it accepts as the answer.
type call struct {
	tool string // toolWarrantNow or toolMayAct
	// logged: the server records may_act decisions (-audit on), so each
	// answer must carry a decision_id; without the log, none may.
	logged bool
}

// append appends the request with JSON-RPC id id about proposition
// P-<prop, 7 digits>.
func (c call) append(b []byte, id, prop int) []byte {
	if c.tool == toolMayAct {
		return appendMayActCall(b, id, prop)
	}
	return appendCall(b, id, prop)
}

// check makes sure the server answered the question; full adds a complete
// decode (the workers ask for it on each client's first answers).
func (c call) check(status int, body []byte, prop int, full bool) error {
	if c.tool == toolMayAct {
		return checkMayAct(status, body, prop, c.logged, full)
	}
	return checkResponse(status, body, prop, full)
}

// appendMayActCall appends a warrant-only may_act request (no concepts,
// so no guard layer even on a server with edge policies) about
// proposition P-<prop, 7 digits>, written without fmt like appendCall.
func appendMayActCall(b []byte, id, prop int) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"may_act","arguments":{"proposition_id":`...)
	b = appendPropID(b, prop)
	return append(b, `,"action":{"action_id":"a","kind":"deploy","risk":"`+mayActRisk+`","reversible":true}}}}`...)
}

// appendPropID appends "P-<prop, 7 digits>" as a JSON string.
func appendPropID(b []byte, prop int) []byte {
	b = append(b, `"P-`...)
	p := strconv.Itoa(prop)
	for range 7 - len(p) {
		b = append(b, '0')
	}
	return append(append(b, p...), '"')
}

// The decision fields as they appear in the structured result (and in
// the layers); inside the text content, the same JSON is a string and its
// quotes are escaped, so these never match there.
var (
	mayActDecision  = []byte(`"decision":"` + expectedDecision + `"`)
	otherDecisions  = [][]byte{[]byte(`"decision":"REQUIRE_CONFIRMATION"`), []byte(`"decision":"DENY"`)}
	decisionIDField = []byte(`"decision_id":"`)
	toolErrorMarker = []byte(`"isError":true`)
)

// expectedDecision is may_act's answer to every call (see mayActRisk).
const expectedDecision = "MAY_ACT"

// checkMayAct accepts only a MAY_ACT answer that carries a decision_id
// exactly when the server keeps a decision log: an answer without one
// would mean the decisions the load is meant to cost were not recorded.
// Every layer's decision is checked as well as the result's (which is the
// most restrictive of them), so a restrictive layer cannot slip past.
func checkMayAct(status int, body []byte, prop int, logged, full bool) error {
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", status, body)
	}
	if bytes.Contains(body, toolErrorMarker) || !bytes.Contains(body, mayActDecision) {
		return fmt.Errorf("may_act did not answer %s: %.300s", expectedDecision, body)
	}
	for _, d := range otherDecisions {
		if bytes.Contains(body, d) {
			return fmt.Errorf("may_act did not answer %s: %.300s", expectedDecision, body)
		}
	}
	if hasDecisionID(body) != logged {
		return decisionIDError(logged, body)
	}
	if !full {
		return nil
	}
	var m struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Decision      string `json:"decision"`
				PropositionID string `json:"proposition_id"`
				DecisionID    string `json:"decision_id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("answer is not JSON: %v: %.300s", err, body)
	}
	sc := m.Result.StructuredContent
	if want := fmt.Sprintf("P-%07d", prop); m.Result.IsError || sc.Decision != expectedDecision || sc.PropositionID != want {
		return fmt.Errorf("asked may_act about %s, want %s, got: %.300s", want, expectedDecision, body)
	}
	if (sc.DecisionID != "") != logged {
		return decisionIDError(logged, body)
	}
	return nil
}

// hasDecisionID reports whether the result carries a non-empty
// decision_id.
func hasDecisionID(body []byte) bool {
	i := bytes.Index(body, decisionIDField)
	return i >= 0 && i+len(decisionIDField) < len(body) && body[i+len(decisionIDField)] != '"'
}

func decisionIDError(logged bool, body []byte) error {
	if logged {
		return fmt.Errorf("may_act answered without a decision_id, but the server should record decisions (-audit on; "+
			"with -url, say -audit off if the server runs without a log): %.300s", body)
	}
	return fmt.Errorf("may_act answered with a decision_id, but the server should run without a decision log "+
		"(-audit off; with -url, say -audit on if the server keeps one): %.300s", body)
}
