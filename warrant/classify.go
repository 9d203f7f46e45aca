package warrant

// Verification classes, ordered so that a larger value is a stronger class.
type class uint8

const (
	classNone class = iota
	classIndirect
	classExternal
	classHuman
)

var classNames = [...]string{VerNone, VerIndirect, VerExternal, VerHuman}

func (c class) String() string { return classNames[c] }

// The method and origin vocabularies of reference-v2 (§4), read once from
// the embedded policy file and never changed. Matching is exact and
// case-sensitive; anything unlisted is untrusted or unknown.
var (
	humanMethods    = set(policy.Methods.Human)
	externalMethods = set(policy.Methods.External)
	indirectMethods = set(policy.Methods.Indirect)
	trustedOrigins  = set(policy.Origins.Trusted)
	// endogenousOrigins are the agent's own output; an external method
	// over one is reported as laundered (verification.laundered_endogenous).
	endogenousOrigins = set(policy.Origins.Endogenous)
)

func set(items []string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, s := range items {
		m[s] = true
	}
	return m
}

// TrustedOrigin reports whether origin_type may raise a check to HUMAN or
// EXTERNAL. Stores use it to demand attestation on writes.
func TrustedOrigin(origin string) bool { return trustedOrigins[origin] }

// classify returns the class one available check confers (§4 steps 2–4).
// view holds the view's subjects, folded on first use.
func classify(c *Check, view *subjectSet) class {
	trusted := trustedOrigins[c.Source.OriginType]
	var k class
	switch {
	case humanMethods[c.Method]:
		k = pick(trusted, classHuman)
	case externalMethods[c.Method]:
		k = pick(trusted, classExternal)
	case indirectMethods[c.Method]:
		k = classIndirect
	default:
		return classNone
	}
	if k >= classExternal && (c.Result == Inconclusive || !view.binds(c.Subjects)) {
		k = classIndirect
	}
	return k
}

func pick(trusted bool, k class) class {
	if trusted {
		return k
	}
	return classIndirect
}

// smallSubjects is the most view subjects binding scans directly; a
// larger view's subjects are folded once into a map.
const smallSubjects = 16

// subjectSet is the view's subjects for subject binding, compared after
// Python's str.lower(). Each check subject is folded once; a small view's
// subjects are scanned and folded as they are compared (folding an id that
// is already lower-case ASCII allocates nothing), a large view's are folded
// once, on the first check that needs binding, into a map. Binding so
// costs time linear in the subjects, not their product (a view of 10,000
// subjects and a check of 10,000 took seconds pairwise).
type subjectSet struct {
	raw  []string
	many map[string]struct{} // folded subjects of a large view, once built
}

// reset makes s the set of view's subjects.
func (s *subjectSet) reset(view []string) {
	s.raw, s.many = view, nil
}

func (s *subjectSet) has(folded string) bool {
	if len(s.raw) <= smallSubjects {
		for _, v := range s.raw {
			if pyLower(v) == folded {
				return true
			}
		}
		return false
	}
	if s.many == nil {
		s.many = make(map[string]struct{}, len(s.raw))
		for _, v := range s.raw {
			s.many[pyLower(v)] = struct{}{}
		}
	}
	_, ok := s.many[folded]
	return ok
}

// binds is subject binding: neither the check nor the view declares
// subjects, or both do and they share one after Python's str.lower().
func (s *subjectSet) binds(check []string) bool {
	if len(check) == 0 || len(s.raw) == 0 {
		return len(check) == 0 && len(s.raw) == 0
	}
	for _, c := range check {
		if s.has(pyLower(c)) {
			return true
		}
	}
	return false
}
