package edgepolicy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
)

// Annotation keys understood on an edge policy.
const (
	annID          = "id"
	annSource      = "source"
	annTarget      = "target"
	annSourceDepth = "source_depth"
	annConfirm     = "confirm"
	annCardinality = "cardinality"
)

// Cardinality values accepted by @cardinality and Request.Cardinality.
const (
	CardinalitySingle   = "single"
	CardinalityMultiple = "multiple"
)

// requiredAnnotations are checked in this order so that error lists read the
// same way on every run.
var requiredAnnotations = []string{annID, annSource, annTarget, annSourceDepth}

var knownAnnotations = map[string]bool{
	annID: true, annSource: true, annTarget: true,
	annSourceDepth: true, annConfirm: true, annCardinality: true,
}

// Set is an immutable, loaded policy file. It is safe for concurrent use.
type Set struct {
	policies []*policy             // file order
	byEdge   map[edgeKey][]*policy // file order within each edge
}

// policy is one validated edge policy.
type policy struct {
	id          string
	source      string // as written in @source
	target      string // as written in @target
	depth       int
	confirm     string // "" for a hard block
	cardinality string // "" means the policy fires for any cardinality
	position    string
	cedar       *cedar.Policy
}

// edgeKey identifies an APPLIES_TO edge the way placements are bound:
// folded names and the exact source depth.
type edgeKey struct {
	source, target string
	depth          int
}

// LoadError describes one rule a policy in the file breaks.
type LoadError struct {
	Position   string // file:line:column of the policy
	PolicyID   string // "" when the policy has no usable @id
	Annotation string // annotation at fault, "" for rules about the whole policy
	Problem    string
}

func (e *LoadError) Error() string {
	who := "policy at " + e.Position
	if e.PolicyID != "" {
		who = fmt.Sprintf("policy %q at %s", e.PolicyID, e.Position)
	}
	if e.Annotation == "" {
		return who + ": " + e.Problem
	}
	return fmt.Sprintf("%s: @%s: %s", who, e.Annotation, e.Problem)
}

// Load parses a Cedar policy file and validates every policy's placement
// annotations. All rule violations are reported together (joined), so an
// operator can fix the file in one pass; on any error no Set is returned.
func Load(filename string, src []byte) (*Set, error) {
	list, err := cedar.NewPolicyListFromBytes(filename, src)
	if err != nil {
		return nil, fmt.Errorf("edgepolicy: %s: %w", filename, err)
	}
	s := &Set{byEdge: make(map[edgeKey][]*policy)}
	firstSeen := make(map[string]string) // @id → position of its first use
	var errs []error
	for _, cp := range list {
		p, perrs := parsePolicy(cp, firstSeen)
		errs = append(errs, perrs...)
		if p != nil {
			s.add(p)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func (s *Set) add(p *policy) {
	s.policies = append(s.policies, p)
	k := edgeKey{fold(p.source), fold(p.target), p.depth}
	s.byEdge[k] = append(s.byEdge[k], p)
}

// parsePolicy returns the policy, or nil and every rule it breaks. firstSeen
// maps each @id met so far to its position; an invalid policy still claims
// its id, so a duplicate is reported even when the first use is broken too.
func parsePolicy(cp *cedar.Policy, firstSeen map[string]string) (*policy, []error) {
	ann := annotations(cp)
	p := &policy{position: formatPosition(cp.Position()), cedar: cp}
	p.id = ann[annID]
	var problems []error
	bad := func(annotation, problem string) {
		problems = append(problems, &LoadError{Position: p.position, PolicyID: p.id,
			Annotation: annotation, Problem: problem})
	}
	if cp.Effect() != cedar.Forbid {
		bad("", "only forbid policies are allowed: edge policies can only restrict an action, never permit one")
	}
	checkAnnotationKeys(ann, bad)
	claimID(firstSeen, p.id, p.position, bad)
	p.source, p.target = ann[annSource], ann[annTarget]
	p.depth = parseDepth(ann, bad)
	p.confirm = checkConfirm(ann, bad)
	p.cardinality = checkCardinality(ann, bad)
	if len(problems) > 0 {
		return nil, problems
	}
	return p, nil
}

// checkAnnotationKeys reports missing or empty required annotations and
// unknown ones. Unknown keys are refused because a misspelt @cardinality or
// @confirm would otherwise silently change what the policy does.
func checkAnnotationKeys(ann map[string]string, bad func(string, string)) {
	for _, k := range requiredAnnotations {
		v, ok := ann[k]
		switch {
		case !ok:
			bad(k, "missing required annotation")
		case v == "":
			bad(k, "must not be empty")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		if !knownAnnotations[k] {
			bad(k, "unknown annotation (known: id, source, target, source_depth, confirm, cardinality)")
		}
	}
}

func claimID(firstSeen map[string]string, id, position string, bad func(string, string)) {
	if id == "" {
		return // reported as missing or empty
	}
	if prev, dup := firstSeen[id]; dup {
		bad(annID, "duplicate id, first used at "+prev)
		return
	}
	firstSeen[id] = position
}

// parseDepth accepts exactly the strings "0".."4": the DepthLevel enum is
// closed, and spellings like "03" or " 3" are more likely mistakes than intent.
func parseDepth(ann map[string]string, bad func(string, string)) int {
	v, ok := ann[annSourceDepth]
	if !ok || v == "" {
		return 0 // already reported as missing or empty
	}
	if len(v) != 1 || v[0] < '0' || v[0] > '4' {
		bad(annSourceDepth, fmt.Sprintf("must be one of \"0\"..\"4\", got %q", v))
		return 0
	}
	return int(v[0] - '0')
}

// checkConfirm refuses a bare or empty @confirm: a human asked to confirm
// must be told what they are confirming.
func checkConfirm(ann map[string]string, bad func(string, string)) string {
	v, ok := ann[annConfirm]
	if ok && strings.TrimSpace(v) == "" {
		bad(annConfirm, "needs the message shown to the human, e.g. @confirm(\"Deleting files needs a human.\")")
	}
	return v
}

func checkCardinality(ann map[string]string, bad func(string, string)) string {
	v, ok := ann[annCardinality]
	if ok && v != CardinalitySingle && v != CardinalityMultiple {
		bad(annCardinality, fmt.Sprintf("must be \"single\" or \"multiple\", got %q", v))
	}
	return v
}

// annotations copies a policy's annotations into a plain map; cedar keys
// them by a named string type that buys nothing here.
func annotations(cp *cedar.Policy) map[string]string {
	ann := cp.Annotations()
	out := make(map[string]string, len(ann))
	for k, v := range ann {
		out[string(k)] = string(v)
	}
	return out
}

func formatPosition(p cedar.Position) string {
	name := p.Filename
	if name == "" {
		name = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d", name, p.Line, p.Column)
}

// Len returns the number of policies in the set.
func (s *Set) Len() int { return len(s.policies) }

// IDs returns the policy ids in file order, e.g. for a start-up log line.
func (s *Set) IDs() []string {
	ids := make([]string, len(s.policies))
	for i, p := range s.policies {
		ids[i] = p.id
	}
	return ids
}
