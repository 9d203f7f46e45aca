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
func classify(c *Check, viewSubjects []string) class {
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
	if k >= classExternal && (!binds(c.Subjects, viewSubjects) || c.Result == Inconclusive) {
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

// binds is subject binding: neither side declares subjects, or both do
// and they share an id after Python's str.lower().
func binds(check, view []string) bool {
	if len(check) == 0 && len(view) == 0 {
		return true
	}
	if len(check) == 0 || len(view) == 0 {
		return false
	}
	for _, a := range check {
		la := pyLower(a)
		for _, b := range view {
			if la == pyLower(b) {
				return true
			}
		}
	}
	return false
}
