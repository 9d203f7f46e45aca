package snapshot

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// IsTrusted reports whether origin is one of the trusted origin types of
// §4 (tool, document, human, api, vendor, sensor). It defers to the kernel
// so the set is written down once; matching is exact and case-sensitive.
func IsTrusted(origin string) bool { return warrant.TrustedOrigin(origin) }

// TrustedOrigins returns the distinct trusted origin types that v's
// records carry, sorted; nil when there are none.
func TrustedOrigins(v *warrant.View) []string {
	var out []string
	eachSource(v, func(_ string, s *warrant.SourceRef) bool {
		if IsTrusted(s.OriginType) && !slices.Contains(out, s.OriginType) {
			out = append(out, s.OriginType)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// RequireAttestation refuses a view with a trusted origin unless the
// writer attested it (ingest_attestation: true, --attest-trusted-origins).
// The refusal names the first record that carries one, because a trusted
// origin lets a check confer EXTERNAL or HUMAN verification and only the
// operator loading the data can vouch for that.
func RequireAttestation(v *warrant.View, attested bool) error {
	if attested {
		return nil
	}
	var err error
	eachSource(v, func(field string, s *warrant.SourceRef) bool {
		if !IsTrusted(s.OriginType) {
			return true
		}
		err = &warrant.Error{Code: warrant.CodeUnattestedTrusted, Field: field + ".source.origin_type",
			Rule: fmt.Sprintf("origin_type %q is a trusted origin and needs an attested write (ewp-ingest --attest-trusted-origins, or ingest_attestation: true over MCP)", s.OriginType)}
		return false
	})
	return err
}

// eachSource visits every record's SourceRef with the record's field path
// until fn returns false.
func eachSource(v *warrant.View, fn func(field string, s *warrant.SourceRef) bool) {
	for i := range v.Assertions {
		if !fn("assertions["+strconv.Itoa(i)+"]", &v.Assertions[i].Source) {
			return
		}
	}
	for i := range v.Evidence {
		if !fn("evidence["+strconv.Itoa(i)+"]", &v.Evidence[i].Source) {
			return
		}
	}
	for i := range v.Checks {
		if !fn("checks["+strconv.Itoa(i)+"]", &v.Checks[i].Source) {
			return
		}
	}
}
