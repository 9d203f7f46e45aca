package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
)

// Argument descriptions of may_act's decision-log arguments.
const (
	approvalIDDesc = "Optional: an approval the operator gave for an earlier REQUIRE_CONFIRMATION decision " +
		"(ewp-audit approve DECISION_ID). It lifts REQUIRE_CONFIRMATION to MAY_ACT only when it is approved, unexpired, " +
		"unused if single-use, and covers this exact action (or this action is inside its scope); it never lifts DENY. " +
		"The approval layer of the result says whether it did, and why not."
	idempotencyKeyDesc = "Optional: a key of your choice for this call (e.g. a UUID). A retry with the same key " +
		"gets the recorded decision back (replayed: true) instead of a second decision; a key used for a different " +
		"call is refused. Refused calls do not use up the key."
)

// confirmationNote tells the agent how a confirmation is answered when
// decisions are on record.
const confirmationNote = "Every decision is recorded; on REQUIRE_CONFIRMATION tell the user its decision_id: " +
	"the operator approves or rejects it outside MCP (ewp-audit approve DECISION_ID), then call may_act again with " +
	"the same arguments plus approval_id. Use idempotency_key to retry a call safely."

// addDecisionArgs adds may_act's decision-log arguments. They exist with
// or without the log, so an agent always learns them; without it they are
// refused with a code that says so.
func addDecisionArgs(props schema) {
	props["approval_id"] = nonEmpty(approvalIDDesc)
	props["idempotency_key"] = nonEmpty(idempotencyKeyDesc)
}

// decisionPrefix is the decision resource's URI prefix.
const (
	decisionPrefix   = "ewp://decision/"
	decisionTemplate = decisionPrefix + "{decision_id}"
)

// withDecisionTools adds decision_get and the decision_id (and replayed)
// answer fields when the decision log is on; tools are unchanged without it.
func (s *Server) withDecisionTools(tools []toolSpec) []toolSpec {
	if s.decisions == nil {
		return tools
	}
	for i := range tools {
		switch tools[i].tool.Name {
		case audit.ToolMayAct:
			tools[i].tool.RawOutputSchema = withOutputFields(tools[i].tool.RawOutputSchema, true)
			tools[i].tool.Description += " " + confirmationNote
		case audit.ToolCheckGrounding:
			tools[i].tool.RawOutputSchema = withOutputFields(tools[i].tool.RawOutputSchema, false)
		}
	}
	return append(tools, s.decisionGetTool())
}

// withOutputFields adds decision_id (required) to a recorded tool's result
// schema, and for may_act the replayed flag of an idempotent retry.
func withOutputFields(raw json.RawMessage, replay bool) json.RawMessage {
	var out schema
	if err := json.Unmarshal(raw, &out); err != nil {
		panic("mcp: output schema does not unmarshal: " + err.Error()) // built by this package
	}
	props, _ := out["properties"].(map[string]any)
	props["decision_id"] = nonEmpty("The decision's id in the decision log (a UUIDv7): read it back with decision_get " +
		"or ewp://decision/{decision_id}; an operator answers a REQUIRE_CONFIRMATION with ewp-audit approve DECISION_ID.")
	if replay {
		props["replayed"] = boolean("True when this is the decision recorded earlier under the same idempotency_key, returned instead of deciding again.")
	}
	required, _ := out["required"].([]any)
	out["required"] = append(required, "decision_id")
	return mustJSON(out)
}

func (s *Server) decisionGetTool() toolSpec {
	in := schema{
		"properties": schema{"decision_id": nonEmpty("The decision_id a may_act or check_grounding answer carried.")},
		"required":   []string{"decision_id"},
	}
	out := object("A recorded decision and its approval trail.", schema{
		"decision": schema{"type": "object", "description": "The decision as recorded: time, tool, caller, proposition and " +
			"view (with the view's canonical sha256), action (arguments by hash), graph version, policies, every layer, " +
			"the outcome (MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED with its code, or ANSWERED) and the approval used."},
		"approvals": array("The operator's approvals and rejections answering this decision, oldest first.",
			schema{"type": "object", "description": "An approval: approval_id, verdict, approver, once, scope, until, note."}),
		"approval_used": schema{"type": "object", "description": "The approval this call presented (approval_id), when it did."},
		"status": schema{"type": "string", "enum": []string{StatusPending, StatusApproved, StatusRejected, StatusExpired, StatusUnverified},
			"description": "Only for a REQUIRE_CONFIRMATION decision: pending (no answer yet: wait and ask again), approved " +
				"(call may_act again with the same arguments plus approval_id), rejected (do not act), expired (the approval " +
				"lapsed: ask the operator again) or unverified (an answer no trusted operator key signed: the gate refuses it)."},
		"approval_id": nonEmpty("With status approved: the approval_id to present in may_act."),
	}, "decision", "approvals")
	return readTool("decision_get",
		"Read a decision from the decision log: what was judged, on which evidence and policies, what each layer said, "+
			"and the operator's approvals of it. Read-only: approvals are given by the operator (ewp-audit), never through MCP. "+
			"A caller reads only the decisions made for its own principal (the ingest role reads all).",
		in, out, s.decisionGet)
}

// decisionRecord is decision_get's answer and the decision resource's body.
type decisionRecord struct {
	Decision     *audit.Decision  `json:"decision"`
	Approvals    []audit.Approval `json:"approvals"`
	ApprovalUsed *audit.Approval  `json:"approval_used,omitempty"`
	// Status and ApprovalID: see confirmationStatus (REQUIRE_CONFIRMATION only).
	Status     string `json:"status,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
}

func (s *Server) decisionGet(ctx context.Context, a args) (any, error) {
	id, err := a.requiredID("", "decision_id")
	if err != nil {
		return nil, err
	}
	return s.decisionRecord(ctx, id)
}

// CodeUnknownDecision: no decision with that id is on record.
const CodeUnknownDecision = "EWP_REFUSE_UNKNOWN_DECISION"

func (s *Server) decisionRecord(ctx context.Context, id string) (*decisionRecord, error) {
	log := s.decisions.Log
	d, err := log.Decision(ctx, id)
	if err == nil && !mayRead(ctx, d) {
		err = audit.ErrNotFound // another agent's decision: as if there were none, so its existence does not leak
	}
	if errors.Is(err, audit.ErrNotFound) {
		return nil, refuse(CodeUnknownDecision, "decision_id", "no decision %q is on record; use the decision_id an answer carried", id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading decision %s from the decision log: %w", id, err)
	}
	rec := &decisionRecord{Decision: d}
	if rec.Approvals, err = log.ApprovalsFor(ctx, id); err != nil {
		return nil, fmt.Errorf("reading the approvals of decision %s: %w", id, err)
	}
	if rec.Approvals == nil {
		rec.Approvals = []audit.Approval{}
	}
	rec.Status, rec.ApprovalID = s.confirmationStatus(ctx, d, rec.Approvals)
	if d.ApprovalID != "" {
		ap, err := log.Approval(ctx, d.ApprovalID)
		switch {
		case err == nil:
			rec.ApprovalUsed = ap
		case !errors.Is(err, audit.ErrNotFound): // an unknown approval was presented: the decision says so
			return nil, fmt.Errorf("reading approval %s: %w", d.ApprovalID, err)
		}
	}
	return rec, nil
}

// registerDecisionResource adds ewp://decision/{decision_id} when the
// decision log is on.
func (s *Server) registerDecisionResource() {
	if s.decisions == nil {
		return
	}
	s.mcp.AddResourceTemplate(mcpgo.NewResourceTemplate(decisionTemplate, "Recorded decision",
		mcpgo.WithTemplateDescription("A may_act or check_grounding decision from the decision log, with its approvals (as decision_get)."),
		mcpgo.WithTemplateMIMEType("application/json")), s.readDecision)
}

func (s *Server) readDecision(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	rec, rerr := s.resolveDecision(ctx, req.Params.URI)
	if rerr != nil {
		return nil, rerr
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
}

// resolveDecision reads the decision a decision URI names.
func (s *Server) resolveDecision(ctx context.Context, uri string) (*decisionRecord, *resourceError) {
	rest, _ := strings.CutPrefix(uri, decisionPrefix)
	id, err := url.PathUnescape(rest)
	if err != nil || id == "" || strings.ContainsAny(rest, "/?") {
		return nil, unknownResource(CodeInvalidArgument, "%q: expected %s", uri, decisionTemplate)
	}
	if s.decisions == nil {
		return nil, unknownResource(CodeNoDecisionLog, "%q: this server runs without a decision log (ewp-mcp --audit off)", uri)
	}
	rec, err := s.decisionRecord(ctx, id)
	if err != nil {
		te := asToolError(err)
		return nil, &resourceError{unknown: te.Error == CodeUnknownDecision, code: te.Error, msg: te.Message}
	}
	return rec, nil
}

// screenDecision answers a read of an unknown or malformed decision URI
// in the pre-filter, as for propositions (-32002, or -32602 for
// 2026-07-28), instead of mcp-go's -32603 for a handler error.
func (s *Server) screenDecision(ctx context.Context, id json.RawMessage, uri string, msg []byte, v verdict) verdict {
	if _, rerr := s.resolveDecision(ctx, uri); rerr != nil {
		v.reply = errorReply(id, rerr.rpcCode(v.modern), rerr.Error(), map[string]string{"error": rerr.code, "message": rerr.msg})
		return v
	}
	v.forward = msg
	return v
}
