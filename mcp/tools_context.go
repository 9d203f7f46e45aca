package mcp

import (
	"context"

	"github.com/ewp-go/ewp/warrant"
)

func (s *Server) memoryContextTool() toolSpec {
	in := schema{
		"properties": schema{
			"proposition_id": propositionIDParam,
			"evaluated_at":   nonEmpty("The instant to evaluate at (ISO 8601). Default: the server clock, now."),
		},
		"required": []string{"proposition_id"},
	}
	out := object("What an agent may say about a remembered proposition.", schema{
		"proposition_id":          str(""),
		"view_id":                 str("The latest stored snapshot, which was evaluated."),
		"evaluated_at":            str("The instant used."),
		"warrant":                 axesSchema(),
		"supporting_evidence_ids": idList(""),
		"opposing_evidence_ids":   idList(""),
		"checks":                  idList(""),
		"open_conflicts":          idList(""),
		"warnings":                idList("Things the agent must say or keep visible; empty when the warrant is clean."),
		"rules":                   idList("The packet rules."),
	}, "proposition_id", "view_id", "evaluated_at", "warrant", "supporting_evidence_ids",
		"opposing_evidence_ids", "checks", "open_conflicts", "warnings", "rules")
	return readTool("memory_context",
		"Before using something you remember about a proposition, get its warrant now plus the warnings you "+
			"must voice (open conflict, incomplete view, stale or superseded, contradicted by a trusted check, "+
			"not accepted). "+rulesShort, in, out, s.memoryContext)
}

func (s *Server) memoryContext(ctx context.Context, a args) (any, error) {
	pid, err := a.requiredID("", "proposition_id")
	if err != nil {
		return nil, err
	}
	t, err := evaluatedAt(a, false)
	if err != nil {
		return nil, err
	}
	if t == "" {
		t = s.clock()
	}
	// view_id is accepted only under the reference's names
	// (reference_names.go); our own memory_context has no such argument.
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
	opposed, err := trustedOpposition(v, t)
	if err != nil {
		return nil, err
	}
	f := filled(w)
	return map[string]any{
		"proposition_id": pid, "view_id": f.ViewID, "evaluated_at": t, "warrant": f.Warrant,
		"supporting_evidence_ids": f.SupportingEvidenceIDs, "opposing_evidence_ids": f.OpposingEvidenceIDs,
		"checks": f.Checks, "open_conflicts": f.OpenConflicts,
		"warnings": warnings(f.Warrant, opposed), "rules": packetRules,
	}, nil
}

// trustedOpposition returns the highest verification class among the
// opposing checks of v at t (NONE when there is none). It asks the kernel
// to classify by evaluating v with only its opposing checks, so the class
// rules (trusted origin, subject binding, availability) are the kernel's,
// never re-derived here.
func trustedOpposition(v *warrant.View, t string) (string, error) {
	only := *v
	only.Checks = nil
	for _, c := range v.Checks {
		if c.Result == warrant.Opposes {
			only.Checks = append(only.Checks, c)
		}
	}
	if len(only.Checks) == 0 {
		return warrant.VerNone, nil
	}
	w, err := warrant.Evaluate(&only, t)
	if err != nil {
		return "", err
	}
	return w.Warrant.Verification, nil
}

// warnings are the things EWP.md §11 says an agent must voice.
func warnings(ax warrant.Axes, opposedBy string) []string {
	out := []string{}
	add := func(cond bool, msg string) {
		if cond {
			out = append(out, msg)
		}
	}
	add(ax.Conflict == warrant.ConflictOpen, "conflict=OPEN — say so: the evidence about this proposition disagrees.")
	add(ax.Sufficiency == warrant.Degraded, "sufficiency=DEGRADED — say the view is incomplete: sources were omitted or retrieval was partial.")
	add(ax.Currency == warrant.Stale, "currency=STALE — the check that verified this is older than the freshness policy; it may no longer hold.")
	add(ax.Currency == warrant.Superseded, "currency=SUPERSEDED — this proposition has been superseded; do not present it as current.")
	add(opposedBy == warrant.VerHuman || opposedBy == warrant.VerExternal,
		"a trusted "+opposedBy+" check OPPOSES this proposition — it was checked and contradicted.")
	add(ax.Acceptance == warrant.Tentative, "acceptance=TENTATIVE — not established; keep that visible (fluency is not recollection).")
	add(ax.Acceptance == warrant.Unaccepted, "acceptance=UNACCEPTED — nothing available supports this proposition; do not assert it.")
	return out
}
