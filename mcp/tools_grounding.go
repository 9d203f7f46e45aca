package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

func (s *Server) checkGroundingTool() toolSpec {
	in := schema{
		"properties": schema{
			"concepts": stringList("The concepts an action touches, e.g. [\"delete\", \"file\"]: exact names, " +
				"case-insensitive, no synonyms. Name every concept the action touches, targets included: a policy " +
				"on delete→file only applies when both are named."),
			"min_depth": levelParam("Optional: also require each named concept to be grounded at least this deep " +
				"(0 EXISTENCE, 1 IDENTITY, 2 CAPABILITIES, 3 CONSTRAINTS, 4 IMPLICATIONS)."),
		},
		"required": []string{"concepts"},
	}
	return readTool("check_grounding",
		"Is what an action touches grounded in the operator's concept graph? Returns grounded, the gaps (each with "+
			"a one-line message) and the trace it rests on. Call it before acting on concepts, and again after learning. "+
			"Read-only; the same graph gives the same answer. may_act with action.concepts runs this check itself.",
		in, checkGroundingOutput(), s.checkGrounding)
}

// checkGrounding decodes the call and asks the gate, which checks,
// records and answers (gate.Ground; its answer is the tool's result).
func (s *Server) checkGrounding(ctx context.Context, a args) (any, error) {
	if err := s.entrance(a); err != nil {
		return nil, err
	}
	concepts, ok, err := a.strings("", "concepts")
	if err == nil && !ok {
		err = badArg("concepts", "is required: the list of concepts the action touches, e.g. [\"delete\", \"file\"]")
	}
	if err != nil {
		return nil, err
	}
	minDepth, err := optionalLevel(a, "", "min_depth")
	if err != nil {
		return nil, err
	}
	w := s.who(ctx)
	r := gate.GroundRequest{Concepts: concepts, MinDepth: minDepth, Agent: w.Agent, Caller: w.Caller, Done: s.slotDone(ctx)}
	out, err := s.gate.Ground(ctx, r)
	if err != nil {
		return nil, asked(err)
	}
	return out, nil
}

func (s *Server) gapTemplateTool() toolSpec {
	in := schema{
		"properties": schema{"gap": gapInput("A gap exactly as check_grounding returned it.")},
		"required":   []string{"gap"},
	}
	out := object("A template for the gap.", schema{
		"gap":       gapOutput(),
		"candidate": candidateOutput(),
		"next":      str("What to do with the template."),
	}, "gap", "candidate", "next")
	return readTool("gap_template",
		"The candidate structure that would fill a gap, for you to complete and send to learn_gap: the levels are set, "+
			"every properties object is empty (fill each with what you know, e.g. {\"description\": \"...\"}). "+
			"REACHABILITY templates are all null: choose the edge (source, target, type, depths). Read-only.",
		in, out, s.gapTemplate)
}

func (s *Server) gapTemplate(_ context.Context, a args) (any, error) {
	gap, err := decodeGap(a)
	if err != nil {
		return nil, err
	}
	cand, err := grounding.TemplateFor(gap)
	if err != nil {
		return nil, guardRefusal("gap", err)
	}
	return map[string]any{"gap": gap, "candidate": cand, "next": templateNext}, nil
}

const templateNext = "Fill every empty properties object with what is true of the concept at that level " +
	"(REACHABILITY: set source_name, target_name, relation_type and both depth levels), show it to the user, " +
	"then call learn_gap with {gap, candidate}. The ingest role is needed to write."

func (s *Server) learnGapTool() toolSpec {
	in := schema{
		"properties": schema{
			"gap":       gapInput("The gap to fill, as check_grounding returned it."),
			"candidate": candidateInput(),
		},
		"required": []string{"gap", "candidate"},
	}
	out := object("What was learned.", schema{
		"learned": array("The revised or new concepts.", object("A concept revision.", schema{
			"id":     str("The concept's id."),
			"name":   str("Its stored name."),
			"levels": levelListSchema("Its depth levels after the write."),
		}, "id", "name", "levels")),
		"provenance":    enum("Always learned: an agent proposed it, a human approved it.", string(grounding.Learned)),
		"graph_version": schema{"type": "integer", "description": "The graph version after the write."},
		"next":          str("What to do next."),
	}, "learned", "provenance", "graph_version", "next")
	return writeTool("learn_gap",
		"Write a filled-in gap_template into the concept graph, stamped learned. Needs the ingest role: only do it "+
			"with the user's approval. Validated against the live graph: a gap already closed is refused with "+
			"EWP_GAP_ALREADY_RESOLVED (re-check), a bad fill with EWP_REFUSE_CANDIDATE_INVALID (the message says what to fix). "+
			"Nothing is written on any refusal.",
		in, out, s.learnGap)
}

func (s *Server) learnGap(ctx context.Context, a args) (any, error) {
	gap, err := decodeGap(a)
	if err != nil {
		return nil, err
	}
	cand, err := decodeCandidate(a)
	if err != nil {
		return nil, err
	}
	revs, err := s.guard.Source().Learn(ctx, gap, cand)
	if err != nil {
		return nil, s.withPrerequisites(ctx, gap, cand, guardRefusal("candidate", err))
	}
	_, v, err := s.guard.Source().Graph(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"learned": learned(revs), "provenance": grounding.Learned, "graph_version": v,
		"next": "call check_grounding again with the same concepts: the answer now rests on what was learned"}, nil
}

// withPrerequisites adds to a refused REACHABILITY fill the DepthGaps that
// must be filled first (GROUNDING.md §4.3), as JSON an agent can pass to
// gap_template, when an end of the proposed edge is too shallow.
func (s *Server) withPrerequisites(ctx context.Context, gap grounding.Gap, cand grounding.Candidate, err error) error {
	we, ok := err.(*warrant.Error)
	if !ok || we.Code != grounding.CodeCandidateInvalid || gap.Kind != grounding.ReachabilityGap {
		return err
	}
	g, _, gerr := s.guard.Source().Graph(ctx)
	if gerr != nil {
		return err
	}
	pre, perr := g.ReachabilityPrerequisites(gap, cand)
	if perr != nil || len(pre) == 0 {
		return err
	}
	b, _ := json.Marshal(pre) // gaps of known kinds always marshal
	we.Rule += " Prerequisite gaps (fill each through gap_template and learn_gap): " + string(b)
	return we
}

type learnedConcept struct {
	ID     string                 `json:"id"`
	Name   string                 `json:"name"`
	Levels []grounding.DepthLevel `json:"levels"`
}

func learned(revs []grounding.Primitive) []learnedConcept {
	out := make([]learnedConcept, len(revs))
	for i, p := range revs {
		out[i] = learnedConcept{ID: p.ID, Name: p.Name, Levels: []grounding.DepthLevel{}}
		for _, d := range p.Depths {
			out[i].Levels = append(out[i].Levels, d.Level)
		}
	}
	return out
}

// guardRefusal gives a grounding error its code and an actionable message;
// anything else (the ledger failing) stays an internal error.
func guardRefusal(field string, err error) error {
	code := grounding.ErrorCode(err)
	if code == "" {
		return err
	}
	msg := err.Error()
	var ge *grounding.GraphError
	switch {
	case code == grounding.CodeGapResolved:
		field, msg = "gap", msg+"; call check_grounding again for the current gaps"
	case errors.As(err, &ge):
		msg += "; the graph must stay acyclic over REQUIRES, CONSTRAINED_BY and DEPENDS_ON: choose another relation or direction"
	}
	return refuse(code, field, "%s", msg)
}
