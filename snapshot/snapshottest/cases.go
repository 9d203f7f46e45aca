package snapshottest

import (
	"encoding/json"
	"slices"

	"github.com/ewp-go/ewp/warrant"
)

const prop = "P-history"

func source(id, lineage, origin string) obj {
	return obj{
		"source_id": id, "lineage_id": lineage, "origin_type": origin,
		"origin_locator": "loc:" + id, "snapshot_id": "snap:" + id,
		"content_hash": "sha256:" + id, "observed_at": "2026-09-01T00:00:00Z",
	}
}

func assertion(id, text string, conf any, src obj) obj {
	return obj{"assertion_id": id, "text": text, "asserted_by": "agent",
		"assertion_confidence": conf, "source": src, "asserted_at": "2026-09-01T00:00:00Z"}
}

func evidence(id, polarity string, src obj) obj {
	return obj{"evidence_id": id, "polarity": polarity, "source": src,
		"content": "content of " + id, "observed_at": "2026-09-01T00:00:00Z"}
}

func check(id, result string, subjects []string, src obj) obj {
	return obj{"check_id": id, "method": "tool_observation", "scope": "scope of " + id,
		"source": src, "observed_at": "2026-09-10T00:00:00Z", "result": result, "subjects": subjects}
}

func conflict(id, status string, props ...string) obj {
	return obj{"conflict_id": id, "status": status, "proposition_ids": props}
}

// parts are the record lists of a view, edited per case.
type parts struct {
	viewID      string
	assertions  []obj
	evidence    []obj
	checks      []obj
	conflicts   []obj
	extra       obj
	noViewID    bool
	proposition string
}

func (p parts) json() string {
	v := obj{"proposition_id": prop, "assertions": orEmpty(p.assertions), "evidence": orEmpty(p.evidence),
		"checks": orEmpty(p.checks), "conflicts": orEmpty(p.conflicts), "subjects": []string{"db-1"}}
	if p.proposition != "" {
		v["proposition_id"] = p.proposition
	}
	if !p.noViewID {
		v["view_id"] = p.viewID
	}
	for k, x := range p.extra {
		v[k] = x
	}
	return encode(v)
}

func orEmpty(xs []obj) []obj {
	if xs == nil {
		return []obj{}
	}
	return xs
}

var (
	s1 = source("s1", "L1", "document")
	s2 = source("s2", "L2", "tool")
	a1 = assertion("a1", "The database runs PostgreSQL 16.", 0.9, s1)
	e1 = evidence("e1", warrant.Supports, s1)
	k1 = check("k1", warrant.Supports, []string{"db-1", "db-2"}, s2)
	c1 = conflict("c1", warrant.StatusOpen, prop, "P-other")
)

// base is the first snapshot of most histories.
func base(viewID string) parts {
	return parts{viewID: viewID, assertions: []obj{a1}, evidence: []obj{e1}, checks: []obj{k1}, conflicts: []obj{c1}}
}

// with returns a copy of m with the given keys replaced.
func with(m obj, kv ...any) obj {
	out := make(obj, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func stored(p parts) Step    { return Step{JSON: p.json(), Want: Stored} }
func unchanged(p parts) Step { return Step{JSON: p.json(), Want: Unchanged} }
func refused(p parts, field string) Step {
	return Step{JSON: p.json(), Want: Refused, Code: warrant.CodeImmutableRecord, Field: field}
}

// Cases returns the history table. It is rebuilt on each call, so a caller
// may modify what it gets.
func Cases() []Case {
	return append(append(recordCases(), snapshotCases()...), surrogateCases()...)
}

// lone is a JSON string holding a lone UTF-16 surrogate escape.
func lone(prefix string) json.RawMessage {
	return json.RawMessage(`"` + prefix + `\ud800"`)
}

func refusedSurrogate(p parts, field string) Step {
	return Step{JSON: p.json(), Want: Refused, Code: warrant.CodeLoneSurrogate, Field: field}
}

// surrogateCases: a lone surrogate anywhere in a view is refused, because
// JSON clients rewrite it to U+FFFD and could never ask for it again.
func surrogateCases() []Case {
	inID := base("v1")
	inID.extra = obj{"proposition_id": lone("P-")}
	inID.conflicts = nil
	inText := base("v1")
	inText.assertions = []obj{with(a1, "text", lone("text "))}
	inSource := base("v1")
	inSource.evidence = []obj{with(e1, "source", with(source("s9", "L9", "extract"), "origin_locator", lone("loc:")))}
	inSubject := base("v1")
	inSubject.checks = []obj{with(k1, "subjects", []any{"db-1", lone("db-")})}
	inLineage := base("v1")
	inLineage.extra = obj{"lineage": []obj{{"kind": warrant.KindDerivedFrom, "from_id": "e1", "to_id": lone("x")}}}
	inMeta := base("v1")
	inMeta.extra = obj{"adapter_meta": obj{"note": lone("n")}}
	paired := base("v1")
	paired.assertions = []obj{with(a1, "text", json.RawMessage(`"emoji \ud83d\ude00"`))}
	return []Case{
		{"lone surrogate in the proposition id", []Step{refusedSurrogate(inID, "proposition_id")}},
		{"lone surrogate in an assertion text", []Step{refusedSurrogate(inText, "assertions[0].text")}},
		{"lone surrogate in a source field", []Step{refusedSurrogate(inSource, "evidence[0].source.origin_locator")}},
		{"lone surrogate in a check subject", []Step{refusedSurrogate(inSubject, "checks[0].subjects[1]")}},
		{"lone surrogate in a lineage endpoint", []Step{refusedSurrogate(inLineage, "lineage[0].to_id")}},
		{"lone surrogate in adapter_meta", []Step{refusedSurrogate(inMeta, "adapter_meta")}},
		{"a surrogate pair is one character", []Step{stored(paired)}},
	}
}

func recordCases() []Case {
	v2 := base("v2")
	v2.evidence = append(slices.Clone(v2.evidence), evidence("e2", warrant.Opposes, source("s3", "L3", "extract")))
	v2.checks = append(slices.Clone(v2.checks), check("k2", warrant.Inconclusive, nil, s2))

	redefinedCheck := base("v2")
	redefinedCheck.checks = []obj{with(k1, "result", warrant.Opposes)}

	gap := base("v2")
	gap.checks = nil
	gapBack := base("v3")
	gapBack.checks = []obj{with(k1, "scope", "another scope")}

	otherLineage := parts{viewID: "v2", evidence: []obj{evidence("e9", warrant.Supports, with(s1, "lineage_id", "L-other"))}}

	widened := base("v2")
	widened.conflicts = []obj{conflict("c1", warrant.StatusOpen, prop, "P-other", "P-third")}
	narrowed := base("v2")
	narrowed.conflicts = []obj{conflict("c1", warrant.StatusOpen, prop)}
	resolved := base("v2")
	resolved.conflicts = []obj{with(conflict("c1", warrant.StatusResolved, "P-other", prop), "note", "fixed by migration")}

	newText := base("v2")
	newText.assertions = []obj{with(a1, "text", "The database runs PostgreSQL 13.")}
	newPolarity := base("v2")
	newPolarity.evidence = []obj{with(e1, "polarity", warrant.Opposes)}

	intConf := base("v1")
	intConf.assertions = []obj{with(a1, "assertion_confidence", json.Number("1"))}
	floatConf := base("v2")
	floatConf.assertions = []obj{with(a1, "assertion_confidence", json.Number("1.0"))}

	subjectsReordered := base("v2")
	subjectsReordered.checks = []obj{with(k1, "subjects", []string{"db-2", "db-1"})}

	otherProp := base("v1")
	otherProp.proposition = "P-elsewhere"
	otherProp.assertions = []obj{with(a1, "proposition_id", "P-elsewhere", "text", "unrelated")}
	otherProp.evidence = []obj{with(e1, "proposition_id", "P-elsewhere")}
	otherProp.checks = []obj{with(k1, "result", warrant.Opposes)}
	otherProp.conflicts = []obj{conflict("c1", warrant.StatusOpen, "P-elsewhere")}

	return []Case{
		{"new records in a new snapshot", []Step{stored(base("v1")), stored(v2)}},
		{"same records again in a new snapshot", []Step{stored(base("v1")), stored(base("v2"))}},
		{"redefined check id", []Step{stored(base("v1")), refused(redefinedCheck, "checks[0]")}},
		{"check id redefined after a snapshot without it", []Step{stored(base("v1")), stored(gap), refused(gapBack, "checks[0]")}},
		{"source with another lineage", []Step{stored(base("v1")), refused(otherLineage, "evidence[0].source")}},
		{"widened conflict participants", []Step{stored(base("v1")), refused(widened, "conflicts[0].proposition_ids")}},
		{"narrowed conflict participants", []Step{stored(base("v1")), refused(narrowed, "conflicts[0].proposition_ids")}},
		{"resolved conflict with a note", []Step{stored(base("v1")), stored(resolved)}},
		{"redefined assertion text", []Step{stored(base("v1")), refused(newText, "assertions[0]")}},
		{"redefined evidence polarity", []Step{stored(base("v1")), refused(newPolarity, "evidence[0]")}},
		{"confidence 1 and 1.0 are the same record", []Step{stored(intConf), stored(floatConf)}},
		{"check subjects reordered is the same check", []Step{stored(base("v1")), stored(subjectsReordered)}},
		{"ids are per proposition", []Step{stored(base("v1")), stored(otherProp)}},
	}
}

func snapshotCases() []Case {
	reordered := base("v2")
	reordered.evidence = append(slices.Clone(reordered.evidence), evidence("e2", warrant.Supports, s2))
	reversed := reordered
	reversed.evidence = []obj{reordered.evidence[1], reordered.evidence[0]}

	changed := base("v1")
	changed.extra = obj{"degraded": true}
	newMeta := base("v1")
	newMeta.extra = obj{"adapter_meta": obj{"adapter": "other"}}
	derived := base("")
	derived.noViewID = true
	derivedReordered := derived
	derivedReordered.evidence = reversed.evidence

	return []Case{
		{"identical re-put", []Step{stored(base("v1")), unchanged(base("v1"))}},
		{"reordered records under the same view_id", []Step{stored(reordered), unchanged(reversed)}},
		{"reordered records under a new view_id", []Step{stored(reordered), stored(parts{
			viewID: "v3", assertions: reversed.assertions, evidence: reversed.evidence, checks: reversed.checks, conflicts: reversed.conflicts,
		})}},
		{"changed re-put", []Step{stored(base("v1")), refused(changed, "view_id")}},
		{"changed adapter_meta re-put", []Step{stored(base("v1")), refused(newMeta, "view_id")}},
		{"derived view id re-put in another order", []Step{stored(derivedReordered), unchanged(func() parts {
			p := derivedReordered
			p.evidence = reordered.evidence
			return p
		}())}},
	}
}
