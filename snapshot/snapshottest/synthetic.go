package snapshottest

import (
	"fmt"
	"strings"
)

// SyntheticView returns the JSON of snapshot snap (0-based) of synthetic
// proposition prop, for benchmarks and load tests. Successive snapshots of
// one proposition behave like real history: they keep the same assertion,
// carry the earlier evidence unchanged, add one evidence item and one
// check, so a store's identity checks and indexes do real work. The view
// has trusted origins (a tool check), so loaders must attest them.
func SyntheticView(prop, snap int) []byte {
	p := fmt.Sprintf("P-%07d", prop)
	var b strings.Builder
	fmt.Fprintf(&b, `{"proposition_id": %q, "view_id": "v-%07d-%d", "subjects": ["host-%d"], "freshness_policy_seconds": 31536000, "assertions": [`, p, prop, snap, prop)
	fmt.Fprintf(&b, `{"assertion_id": "a-%d", "text": "Host %d runs service build %d behind the load balancer.", "asserted_by": "assistant", "assertion_confidence": 0.8, "asserted_at": "2026-09-01T10:00:00Z", "source": %s}`,
		prop, prop, prop%997, sourceJSON(fmt.Sprintf("chat-%d", prop), "L-chat", "turn"))
	b.WriteString(`], "evidence": [`)
	for k := 0; k <= snap; k++ {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"evidence_id": "e-%d-%d", "polarity": "supports", "content": "log line %d of host %d shows the build", "observed_at": "2026-09-0%dT12:00:00Z", "source": %s}`,
			prop, k, k, prop, 1+k%9, sourceJSON(fmt.Sprintf("log-%d-%d", prop, k), fmt.Sprintf("L-log-%d", k%3), "extract"))
	}
	b.WriteString(`], "checks": [`)
	fmt.Fprintf(&b, `{"check_id": "k-%d-%d", "method": "tool_observation", "scope": "version probe", "subjects": ["host-%d"], "result": "supports", "observed_at": "2026-09-1%dT08:00:00Z", "source": %s}`,
		prop, snap, prop, snap%10, sourceJSON(fmt.Sprintf("probe-%d-%d", prop, snap), "L-probe", "tool"))
	b.WriteString(`]`)
	if snap%4 == 3 {
		fmt.Fprintf(&b, `, "conflicts": [{"conflict_id": "c-%d", "status": "open", "proposition_ids": [%q, "P-other"], "note": "probe disagrees"}]`, prop, p)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

func sourceJSON(id, lineage, origin string) string {
	return fmt.Sprintf(`{"source_id": %q, "lineage_id": %q, "origin_type": %q, "origin_locator": "loc:%s", "snapshot_id": "snap:%s", "content_hash": "sha256:%s", "observed_at": "2026-09-01T00:00:00Z"}`,
		id, lineage, origin, id, id, id)
}

// SyntheticLines returns n synthetic views as JSON Lines, spread over
// n/perProp propositions with perProp snapshots each, snapshots of one
// proposition in order.
func SyntheticLines(n, perProp int) []byte {
	var b strings.Builder
	for i := range n {
		b.Write(SyntheticView(i/perProp, i%perProp))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
