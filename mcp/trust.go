package mcp

import (
	"slices"

	"github.com/ewp-go/ewp/warrant"
)

// isTrusted is the kernel's list of origins that can raise verification
// to HUMAN or EXTERNAL (EWP.md §4): exact, case-sensitive.
func isTrusted(origin string) bool { return warrant.TrustedOrigin(origin) }

// sources returns pointers to every SourceRef of v, so trust rules see
// assertions, evidence and checks alike.
func sources(v *warrant.View) []*warrant.SourceRef {
	out := make([]*warrant.SourceRef, 0, len(v.Assertions)+len(v.Evidence)+len(v.Checks))
	for i := range v.Assertions {
		out = append(out, &v.Assertions[i].Source)
	}
	for i := range v.Evidence {
		out = append(out, &v.Evidence[i].Source)
	}
	for i := range v.Checks {
		out = append(out, &v.Checks[i].Source)
	}
	return out
}

// trustedIn lists the distinct trusted origins v uses, sorted.
func trustedIn(v *warrant.View) []string {
	var found []string
	for _, src := range sources(v) {
		if isTrusted(src.OriginType) && !slices.Contains(found, src.OriginType) {
			found = append(found, src.OriginType)
		}
	}
	slices.Sort(found)
	return found
}

// demote rewrites every trusted origin of an inline view to
// "inline:<origin>", which is untrusted, and returns the distinct origins
// it rewrote (sorted, never nil). A caller-built view is a hypothesis: it
// must not be able to claim a tool or a human checked something.
func demote(v *warrant.View) []string {
	demoted := trustedIn(v)
	for _, src := range sources(v) {
		if isTrusted(src.OriginType) {
			src.OriginType = "inline:" + src.OriginType
		}
	}
	if demoted == nil {
		demoted = []string{}
	}
	return demoted
}

// attestation reads ingest_attestation. Only JSON true attests; a missing
// value is false; anything else ("true", 1) is refused rather than read as
// either, since a pipeline that sends it means something by it.
func attestation(a args) (bool, error) {
	raw, ok := a["ingest_attestation"]
	if !ok {
		return false, nil
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, refuse(warrant.CodeUnattestedTrusted, "ingest_attestation",
		"must be JSON true (or false); got %s", describe(raw))
}

// requireAttested refuses records with trusted origins on an unattested
// write.
func requireAttested(origins []string, attested bool) error {
	if len(origins) == 0 || attested {
		return nil
	}
	return refuse(warrant.CodeUnattestedTrusted, "ingest_attestation",
		"records with trusted origin_type %v need ingest_attestation: true, "+
			"set only when the operator vouches that they really come from such a source", origins)
}
