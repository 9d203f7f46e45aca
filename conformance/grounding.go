package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ewp-go/ewp/grounding"
)

// GroundingSection is the report section of grounding cases.
const GroundingSection = "Grounding"

// GroundingCase is one case of a grounding pack (vre-pack/cases.json):
// a graph, the concepts asked about and what check_grounding must say.
type GroundingCase struct {
	// Named is the pack graph the case runs on ("filesystem"), or "" for
	// an inline graph; GraphDoc is the graph document either way.
	Named    string
	GraphDoc json.RawMessage
	Query    []string
	MinDepth *int
	Expect   map[string]any
}

// GroundingCases reads a grounding pack's cases.json; a named graph is
// read from NAME.json beside it.
func GroundingCases(path string) ([]Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pcs, err := grounding.DecodeCases(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	graphs := map[string]json.RawMessage{}
	cases := make([]Case, 0, len(pcs))
	for _, pc := range pcs {
		gc := &GroundingCase{Named: pc.NamedGraph(), GraphDoc: pc.Graph, Query: pc.Query, MinDepth: pc.MinDepth, Expect: pc.Expect}
		if gc.Named != "" {
			if graphs[gc.Named] == nil {
				doc, err := os.ReadFile(filepath.Join(filepath.Dir(path), gc.Named+".json"))
				if err != nil {
					return nil, fmt.Errorf("grounding case %s: graph %q: %w", pc.Name, gc.Named, err)
				}
				graphs[gc.Named] = doc
			}
			gc.GraphDoc = graphs[gc.Named]
		}
		cases = append(cases, Case{Section: GroundingSection, Name: pc.Name, Grounding: gc})
	}
	return cases, nil
}

// Grounder is a target with check_grounding. Ground answers one case's
// question on its graph: the check's result object, a refusal, or a
// *Broken with class SKIPPED when the target does not hold that graph.
type Grounder interface {
	Ground(ctx context.Context, c *GroundingCase) (Answer, error)
}

// kernelGraphs caches the graphs the kernel target builds, by document.
var kernelGraphs sync.Map

// Ground runs the grounding engine in process on the case's graph.
func (kernelTarget) Ground(_ context.Context, c *GroundingCase) (Answer, error) {
	g, err := kernelGraph(c.GraphDoc)
	if err != nil {
		return Answer{Refusal: &Refusal{Refused: true, Code: grounding.ErrorCode(err), Error: err.Error()}}, nil
	}
	r, err := g.Check(c.Query, c.MinDepth)
	if err != nil {
		return Answer{Refusal: &Refusal{Refused: true, Code: grounding.ErrorCode(err), Error: err.Error()}}, nil
	}
	return Answer{View: toMap(r)}, nil
}

func kernelGraph(doc json.RawMessage) (*grounding.Graph, error) {
	if g, ok := kernelGraphs.Load(string(doc)); ok {
		return g.(*grounding.Graph), nil
	}
	d, err := grounding.DecodeDocument(doc)
	if err != nil {
		return nil, err
	}
	g, _, err := (&grounding.Graph{}).ApplyDocument(d, time.Unix(0, 0).UTC())
	if err != nil {
		return nil, err
	}
	kernelGraphs.Store(string(doc), g)
	return g, nil
}

// judgeGrounding asks the target's check_grounding and compares the
// result as the grounding pack's README says (grounding.CompareCase).
func (r *Runner) judgeGrounding(ctx context.Context, c Case, res *Result) {
	g, ok := r.Target.(Grounder)
	if !ok {
		res.Findings = append(res.Findings, Finding{Class: Skipped, Detail: "the target has no check_grounding"})
		return
	}
	a, broke := r.call(ctx, func(ctx context.Context) (Answer, error) { return g.Ground(ctx, c.Grounding) })
	switch {
	case broke != nil:
		res.Findings = append(res.Findings, *broke)
		return
	case a.Refusal != nil:
		res.Findings = append(res.Findings, Finding{Class: RefusalMismatch, Path: "refused", Expected: "false", Got: "true",
			Detail: "check_grounding refused the question: " + a.Refusal.Code + ": " + a.Refusal.Error})
		return
	}
	var got grounding.Result
	b, _ := json.Marshal(a.View)
	if err := json.Unmarshal(b, &got); err != nil {
		res.Findings = append(res.Findings, Finding{Class: WarrantMismatch, Path: "grounding", Detail: "the result is not a check_grounding result: " + err.Error()})
		return
	}
	for _, m := range grounding.CompareCase(c.Grounding.Expect, got) {
		res.Findings = append(res.Findings, Finding{Class: WarrantMismatch, Path: "grounding", Detail: m})
	}
}
