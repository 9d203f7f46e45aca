package callpolicy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"

	"github.com/ewp-go/ewp/edgepolicy"
)

// Bounds of a policy file: the operator's own file, still read with a cap
// so a wrong path (a log, a device) cannot exhaust the server at start.
const (
	MaxFileBytes = 1 << 20
	MaxPolicies  = 1000
)

// Annotations understood on a call policy.
const (
	annID      = "id"
	annConfirm = "confirm"
)

// Set is a loaded call-policy file, safe for concurrent use.
type Set struct {
	policies []*policy // file order
}

type policy struct {
	id       string
	confirm  string // "" for a hard block
	position string
	cedar    *cedar.Policy
}

// LoadError is one rule a policy breaks; it is edgepolicy's, so both
// policy files report problems the same way.
type LoadError = edgepolicy.LoadError

// Load parses a call-policy file. Every rule broken is reported together;
// on any error no Set is returned.
func Load(filename string, src []byte) (*Set, error) {
	if len(src) > MaxFileBytes {
		return nil, fmt.Errorf("callpolicy: %s: the file is %d bytes, over the limit of %d", filename, len(src), MaxFileBytes)
	}
	list, err := cedar.NewPolicyListFromBytes(filename, src)
	if err != nil {
		return nil, fmt.Errorf("callpolicy: %s: %w", filename, err)
	}
	if len(list) > MaxPolicies {
		return nil, fmt.Errorf("callpolicy: %s: %d policies, over the limit of %d", filename, len(list), MaxPolicies)
	}
	s := &Set{}
	seen := map[string]string{}
	var errs []error
	for _, cp := range list {
		p, perrs := parse(cp, seen)
		errs = append(errs, perrs...)
		if p != nil {
			s.policies = append(s.policies, p)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func parse(cp *cedar.Policy, seen map[string]string) (*policy, []error) {
	ann := map[string]string{}
	for k, v := range cp.Annotations() {
		ann[string(k)] = string(v)
	}
	pos := cp.Position()
	p := &policy{id: ann[annID], confirm: ann[annConfirm], cedar: cp,
		position: fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)}
	var errs []error
	bad := func(annotation, problem string) {
		errs = append(errs, &LoadError{Position: p.position, PolicyID: p.id, Annotation: annotation, Problem: problem})
	}
	if cp.Effect() != cedar.Forbid {
		bad("", "only forbid policies are allowed: call policies can only restrict a call (the tool manifest is the allow-list)")
	}
	id, hasID := ann[annID]
	switch {
	case !hasID:
		bad(annID, "missing required annotation")
	case id == "":
		bad(annID, "must not be empty")
	case seen[id] != "":
		bad(annID, "duplicate id, first used at "+seen[id])
	default:
		seen[id] = p.position
	}
	if v, ok := ann[annConfirm]; ok && strings.TrimSpace(v) == "" {
		bad(annConfirm, `needs the message shown to the human, e.g. @confirm("Deleting files needs a human.")`)
	}
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		if k != annID && k != annConfirm {
			bad(k, "unknown annotation (known: id, confirm)")
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// Len is the number of policies.
func (s *Set) Len() int { return len(s.policies) }

// IDs are the policy ids in file order.
func (s *Set) IDs() []string {
	ids := make([]string, len(s.policies))
	for i, p := range s.policies {
		ids[i] = p.id
	}
	return ids
}
