package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Read tools: they never write and never decide an action.

func (s *Server) listPropositionsTool() toolSpec {
	in := schema{"properties": schema{
		"query": str("Text to find in proposition ids and assertion texts (case-insensitive). Omit to list all."),
		"limit": integer("How many propositions to return at most (default 50).", 1, 500),
	}}
	hit := object("A proposition.", schema{
		"proposition_id": str(""),
		"latest_view_id": str("Its latest stored snapshot."),
		"texts":          idList("Assertion texts of the latest snapshot."),
	}, "proposition_id", "latest_view_id", "texts")
	out := object("Matching propositions.", schema{
		"propositions": array("", hit),
		"count":        schema{"type": "integer"},
	}, "propositions", "count")
	return readTool("list_propositions",
		"Find stored propositions by id or assertion text. Discovery only: it never says whether anything is true; "+
			"call memory_context or warrant_now for that. "+rulesShort, in, out, s.listPropositions)
}

func (s *Server) listPropositions(ctx context.Context, a args) (any, error) {
	query, _, err := a.text("", "query")
	if err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", 1, 500, 50)
	if err != nil {
		return nil, err
	}
	hits, err := s.store.List(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []PropositionSummary{}
	}
	for i := range hits {
		if hits[i].Texts == nil {
			hits[i].Texts = []string{}
		}
	}
	return map[string]any{"propositions": hits, "count": len(hits)}, nil
}

func (s *Server) warrantNowTool() toolSpec {
	in := schema{
		"properties": schema{
			"proposition_id":     nonEmpty("A stored proposition to evaluate (its latest snapshot unless view_id is given). Give this or view."),
			"view_id":            viewIDParam,
			"view":               viewSchema("An inline EvidenceView to evaluate hypothetically instead of a stored one. Trusted origins in it are demoted to inline:<origin> unless the caller holds the ingest role and attests."),
			"evaluated_at":       nonEmpty("Required. The instant T to evaluate at (ISO 8601; no offset means UTC). Records after T are unavailable."),
			"ingest_attestation": boolean("Inline view only: with the ingest role, true keeps trusted origins trusted."),
			"policy_id":          enum("Epistemic policy; only reference-v2 exists.", warrant.PolicyID),
			"policy_version":     enum("Policy version; only reference-v2 exists.", warrant.PolicyVersion),
		},
		"required": []string{"evaluated_at"},
	}
	return readTool("warrant_now",
		"Compute the WarrantView of a proposition at instant evaluated_at: the five axes (acceptance, conflict, "+
			"verification, currency, sufficiency) and diagnostics. Deterministic: same snapshot and T, same answer. "+rulesShort,
		in, warrantNowOutput(), s.warrantNow)
}

// warrantResult is a WarrantView plus, for inline views, what was demoted.
type warrantResult struct {
	*warrant.WarrantView
	InlineOriginsDemoted *[]string `json:"inline_origins_demoted,omitempty"`
}

func (s *Server) warrantNow(ctx context.Context, a args) (any, error) {
	if err := checkPolicy(a); err != nil {
		return nil, err
	}
	t, err := evaluatedAt(a, true)
	if err != nil {
		return nil, err
	}
	attested, err := attestation(a)
	if err != nil {
		return nil, err
	}
	if a.has("view") {
		return s.warrantInline(ctx, a, t, attested)
	}
	pid, ok, err := a.id("", "proposition_id")
	if err == nil && !ok {
		err = badArg("proposition_id", "give proposition_id (a stored proposition) or view (an inline EvidenceView)")
	}
	if err != nil {
		return nil, err
	}
	vid, _, err := a.id("", "view_id")
	if err != nil {
		return nil, err
	}
	v, err := s.snapshot(ctx, pid, vid)
	if err != nil {
		return nil, err
	}
	w, err := warrant.Evaluate(v, t)
	if err != nil {
		return nil, err
	}
	return &warrantResult{WarrantView: filled(w)}, nil
}

func (s *Server) warrantInline(ctx context.Context, a args, t string, attested bool) (any, error) {
	if a.has("proposition_id") || a.has("view_id") {
		return nil, badArg("view", "an inline view carries its own proposition_id and view_id; "+
			"do not also give proposition_id or view_id (those select a stored snapshot)")
	}
	v, err := s.decodeInlineView(a["view"], warrant.CodeInvalidView)
	if err != nil {
		return nil, err
	}
	demoted := []string{}
	if !(hasIngest(ctx) && attested) {
		demoted = demote(v)
	}
	w, err := warrant.Evaluate(v, t)
	if err != nil {
		return nil, err
	}
	return &warrantResult{WarrantView: filled(w), InlineOriginsDemoted: &demoted}, nil
}

// decodeInlineView decodes a caller's EvidenceView. A WarrantView is
// output, never evidence, so one is refused with warrantCode before the
// kernel (which ignores unknown keys) could read it as an empty view.
func (s *Server) decodeInlineView(raw json.RawMessage, warrantCode string) (*warrant.View, error) {
	obj, err := decodeObject("view", raw)
	if err != nil {
		return nil, refuse(warrant.CodeInvalidView, "view", "must be an EvidenceView (a JSON object); got %s", kindOf(raw))
	}
	if looksLikeWarrantView(obj) {
		return nil, refuse(warrantCode, "view", "this is a WarrantView (it has \"warrant\"/\"protocol_version\"); "+
			"a WarrantView is computed output and is never accepted as evidence: send the EvidenceView it was computed from")
	}
	return s.decodeView(raw)
}

func looksLikeWarrantView(obj args) bool {
	return obj.has("warrant") || obj.has("protocol_version")
}

// checkPolicy refuses any epistemic policy other than reference-v2.
func checkPolicy(a args) error {
	for _, p := range [][2]string{{"policy_id", warrant.PolicyID}, {"policy_version", warrant.PolicyVersion}} {
		name, want := p[0], p[1]
		got, ok, err := a.str("", name)
		if err != nil {
			return refuse(warrant.CodeUnknownPolicy, name, "must be the string %q", want)
		}
		if ok && got != want {
			return refuse(warrant.CodeUnknownPolicy, name, "unknown policy %q; this server evaluates %s only", got, want)
		}
	}
	return nil
}

// evaluatedAt reads T. It must be a JSON string, taken as given: the
// reference refuses any other type, and a number read as its text would
// be evaluated (20260921 is a basic-format date). "" and null are missing.
func evaluatedAt(a args, required bool) (string, error) {
	if raw, ok := a["evaluated_at"]; ok && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte{'"'}) {
		return "", refuse(warrant.CodeInvalidView, "evaluated_at",
			"must be a string holding an ISO 8601 instant (e.g. \"2026-09-21T18:00:00Z\"), not %s", kindOf(raw))
	}
	t, ok, err := a.text("", "evaluated_at")
	if err != nil {
		return "", err
	}
	if (!ok || t == "") && required {
		return "", refuse(warrant.CodeMissingEvaluatedAt, "evaluated_at",
			"is required: warrant is computed at an instant, e.g. \"2026-09-21T18:00:00Z\"; there is no default")
	}
	return t, nil
}

// snapshot reads the latest snapshot of pid, or the one named vid.
func (s *Server) snapshot(ctx context.Context, pid, vid string) (*warrant.View, error) {
	var v *warrant.View
	var err error
	if vid == "" {
		v, err = s.store.Latest(ctx, pid)
	} else {
		v, err = s.store.Get(ctx, pid, vid)
	}
	if errors.Is(err, ErrNotFound) {
		return nil, missing(pid, vid)
	}
	return v, err
}

func missing(pid, vid string) error {
	if vid == "" {
		return refuse(warrant.CodeMissingView, "proposition_id",
			"no stored snapshot of proposition %q; list_propositions shows what is stored", pid)
	}
	return refuse(warrant.CodeMissingView, "view_id",
		"proposition %q has no snapshot %q; omit view_id for the latest", pid, vid)
}

// filled sets every nil list of w to an empty one (gate.Filled).
func filled(w *warrant.WarrantView) *warrant.WarrantView { return gate.Filled(w) }

func (s *Server) evidenceViewGetTool() toolSpec {
	in := schema{
		"properties": schema{"proposition_id": propositionIDParam, "view_id": viewIDParam},
		"required":   []string{"proposition_id"},
	}
	out := object("A stored snapshot.", schema{
		"proposition_id": str(""),
		"view_id":        str("The snapshot returned."),
		"latest_view_id": str("The proposition's latest snapshot."),
		"is_latest":      boolean("Whether the snapshot returned is the latest."),
		"view":           openObject("The EvidenceView exactly as stored.", schema{}),
	}, "proposition_id", "view_id", "latest_view_id", "is_latest", "view")
	return readTool("evidence_view_get",
		"Read a stored EvidenceView snapshot (the latest unless view_id is given): the evidence itself, "+
			"not a verdict. "+rulesShort, in, out, s.evidenceViewGet)
}

func (s *Server) evidenceViewGet(ctx context.Context, a args) (any, error) {
	pid, err := a.requiredID("", "proposition_id")
	if err != nil {
		return nil, err
	}
	vid, _, err := a.id("", "view_id")
	if err != nil {
		return nil, err
	}
	latest, err := s.snapshot(ctx, pid, "")
	if err != nil {
		return nil, err
	}
	v := latest
	if vid != "" && vid != latest.ViewID {
		if v, err = s.snapshot(ctx, pid, vid); err != nil {
			return nil, err
		}
	}
	return map[string]any{
		"proposition_id": pid, "view_id": v.ViewID, "latest_view_id": latest.ViewID,
		"is_latest": v.ViewID == latest.ViewID, "view": json.RawMessage(warrant.Encode(v)),
	}, nil
}
