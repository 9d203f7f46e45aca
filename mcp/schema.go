package mcp

import (
	"encoding/json"
	"slices"

	"github.com/ewp-go/ewp/warrant"
)

// JSON Schemas for tools/list, written by hand so every parameter, nested
// ones included, carries a description an agent can act on. They describe;
// the server still checks every argument itself. Nested schemas are inlined
// rather than referenced with $ref because several MCP clients do not
// resolve $ref in tool schemas.

type schema = map[string]any

// object is a closed object: unknown keys are refused by the server too.
func object(desc string, props schema, required ...string) schema {
	s := schema{"type": "object", "description": desc, "properties": props,
		"additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// openObject is an object that may carry keys beyond props (the view
// decoder ignores keys it does not know).
func openObject(desc string, props schema, required ...string) schema {
	s := object(desc, props, required...)
	delete(s, "additionalProperties")
	return s
}

func str(desc string) schema { return schema{"type": "string", "description": desc} }

func nonEmpty(desc string) schema {
	return schema{"type": "string", "minLength": 1, "description": desc}
}

func nullableStr(desc string) schema {
	return schema{"type": []string{"string", "null"}, "description": desc}
}

func enum(desc string, values ...string) schema {
	return schema{"type": "string", "enum": values, "description": desc}
}

func boolean(desc string) schema { return schema{"type": "boolean", "description": desc} }

func integer(desc string, lo, hi int64) schema {
	return schema{"type": "integer", "minimum": lo, "maximum": hi, "description": desc}
}

func number(desc string) schema { return schema{"type": "number", "description": desc} }

func array(desc string, items schema) schema {
	return schema{"type": "array", "items": items, "description": desc}
}

func stringList(desc string) schema { return array(desc, nonEmpty("")) }

// paramNames lists the properties of a tool's input schema: the argument
// names the server accepts, so the schema is the single source of truth.
func paramNames(s schema) []string {
	props, _ := s["properties"].(schema)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func mustJSON(s schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic("mcp: schema does not marshal: " + err.Error()) // a bug in this file
	}
	return b
}

// Shared argument schemas.

var (
	propositionIDParam = nonEmpty("Proposition id, e.g. \"P-prod-db-version\". A number is read as its decimal text.")
	viewIDParam        = nonEmpty("Snapshot (view) id of the proposition. Omit for the latest stored snapshot.")
	attestationParam   = boolean("Set to JSON true only when the operator vouches for records whose source.origin_type " +
		"is trusted (tool, document, human, api, vendor, sensor). Anything but true leaves such records unattested.")
)

func sourceRefSchema(desc string) schema {
	return object(desc, schema{
		"source_id":        nonEmpty("Id of the source; one source_id names one SourceRef across the proposition."),
		"lineage_id":       nonEmpty("Independence lineage: sources sharing it are not independent confirmations."),
		"origin_type":      nonEmpty("Where the source came from. Trusted: tool, document, human, api, vendor, sensor; endogenous: extract, turn, derived, summary, model_introspection; anything else is untrusted. Exact, case-sensitive."),
		"origin_locator":   str("Where to find the source (URL, command, message reference)."),
		"snapshot_id":      str("Id of the source snapshot the record was read from."),
		"content_hash":     nonEmpty("Hash of the source content, e.g. \"sha256:…\"."),
		"observed_at":      nonEmpty("When the source was observed: an ISO 8601 instant; no offset means UTC."),
		"extractor_id":     nullableStr("Optional id of the extractor that read the source."),
		"parent_source_id": nullableStr("Optional id of the source this one was derived from."),
	}, "source_id", "lineage_id", "origin_type", "origin_locator", "snapshot_id", "content_hash", "observed_at")
}

// viewSchema describes an EvidenceView (EWP.md §2).
func viewSchema(desc string) schema {
	src := sourceRefSchema("Provenance of the record.")
	recordProp := nonEmpty("Optional: the view's proposition_id or a variant \"<proposition_id>:<suffix>\"; defaults to the view's.")
	return openObject(desc, schema{
		"proposition_id": nonEmpty("The one proposition this view is about. Required."),
		"view_id":        schema{"type": []string{"string", "integer"}, "description": "Snapshot id; omitted or \"\" derives \"v-\" + 20 hex digits of the content hash."},
		"assertions": array("Claims that the proposition holds (assertions carry no polarity).", object("An assertion.", schema{
			"assertion_id":         nonEmpty("Unique within the view."),
			"text":                 str("The claim as stated."),
			"asserted_by":          str("Who asserted it."),
			"assertion_confidence": number("The asserter's confidence: a finite number (reported, never used by the axes)."),
			"source":               src,
			"asserted_at":          str("ISO 8601 instant the claim was made; records after evaluated_at are unavailable."),
			"proposition_id":       recordProp,
		}, "assertion_id", "text", "asserted_by", "assertion_confidence", "source", "asserted_at")),
		"evidence": array("Observations for or against the proposition.", object("An evidence item.", schema{
			"evidence_id":    nonEmpty("Unique within the view."),
			"polarity":       enum("Whether it supports or opposes the proposition.", warrant.Supports, warrant.Opposes),
			"source":         src,
			"content":        str("What was observed."),
			"observed_at":    str("ISO 8601 instant of the observation."),
			"proposition_id": recordProp,
		}, "evidence_id", "polarity", "source", "content", "observed_at")),
		"checks": array("Verifications of the proposition.", checkSchema(src)),
		"conflicts": array("Explicit conflict rows.", object("A conflict.", schema{
			"conflict_id":     nonEmpty("Unique within the view."),
			"status":          enum("open or resolved.", warrant.StatusOpen, warrant.StatusResolved),
			"proposition_ids": schema{"type": "array", "minItems": 1, "items": nonEmpty(""), "description": "Participants; must name the view's proposition or a variant."},
			"note":            str("Optional note."),
		}, "conflict_id", "status", "proposition_ids")),
		"lineage": array("Lineage edges (no time; always apply).", object("A lineage edge.", schema{
			"kind":    enum("Edge kind; superseded_by from the proposition makes it SUPERSEDED.", warrant.KindDerivedFrom, warrant.KindSupersedes, warrant.KindSupersededBy, warrant.KindParentSource),
			"from_id": nonEmpty("Edge start."),
			"to_id":   nonEmpty("Edge end."),
		}, "kind", "from_id", "to_id")),
		"omitted_sources":          stringList("Sources known to be left out; any makes the view DEGRADED."),
		"retrieval_scope":          str("\"complete\" (default) or anything else, which makes the view DEGRADED."),
		"degraded":                 boolean("true marks the view DEGRADED."),
		"freshness_policy_seconds": integer("Age after which the class-conferring check is STALE; default 2592000 (30 days).", 0, warrant.MaxFreshness),
		"subjects":                 stringList("Subject ids the proposition is about; checks must share one to verify."),
		"adapter_meta":             schema{"type": "object", "description": "Free adapter metadata; ignored by the axes."},
	}, "proposition_id")
}

var methodParam = nonEmpty("How it was checked. Human: human_attestation, human_review; external: tool_observation, " +
	"external_clock, document_quote, independent_reproduction, vendor_documentation, winrm, external_api; " +
	"indirect: inference, extract, derived, model_introspection. Unknown methods confer nothing.")

func checkSchema(src schema) schema {
	return object("A verification check.", schema{
		"check_id":    nonEmpty("Unique within the view."),
		"method":      methodParam,
		"scope":       str("What was checked, in words (never read for identity)."),
		"source":      src,
		"observed_at": str("ISO 8601 instant of the check."),
		"result":      enum("Outcome of the check.", warrant.Supports, warrant.Opposes, warrant.Inconclusive),
		"subjects":    stringList("Subject ids the check was about; binds when it shares one with the view."),
	}, "check_id", "method", "scope", "source", "observed_at", "result")
}

func actionSchema() schema {
	return object("What the agent wants to do.", schema{
		"action_id":  nonEmpty("Your id for the action."),
		"kind":       nonEmpty("What kind of action, e.g. \"deploy\", \"send_email\"."),
		"risk":       enum("Risk of the action.", warrant.RiskLow, warrant.RiskMedium, warrant.RiskHigh),
		"reversible": boolean("Whether the action can be undone. Required; never assumed."),
	}, "action_id", "kind", "risk", "reversible")
}

func riskPolicySchema() schema {
	return object("Action policy override. Only a caller holding the ingest role may send it; the default is action-v0.1.", schema{
		"policy_id":                      nonEmpty("Default \"action-v0.1\"."),
		"version":                        nonEmpty("Default \"0.1.0\"."),
		"high_requires_accepted":         boolean("Default true: high-risk actions need acceptance=ACCEPTED."),
		"high_requires_no_open_conflict": boolean("Default true: high-risk actions need no open conflict."),
	})
}

// Output schemas.

func axesSchema() schema {
	return openObject("The five warrant axes plus non-normative diagnostics.", schema{
		"acceptance":      enum("", warrant.Accepted, warrant.Tentative, warrant.Unaccepted),
		"conflict":        enum("", warrant.ConflictOpen, warrant.ConflictResolved, warrant.ConflictNone),
		"verification":    enum("", warrant.VerHuman, warrant.VerExternal, warrant.VerIndirect, warrant.VerNone),
		"currency":        enum("", warrant.Current, warrant.Stale, warrant.Superseded),
		"sufficiency":     enum("", warrant.Sufficient, warrant.Insufficient, warrant.Degraded),
		"strength":        number("Non-normative score; never branch on it."),
		"rationale_codes": array("Non-normative reasons.", str("")),
	}, "acceptance", "conflict", "verification", "currency", "sufficiency")
}

func idList(desc string) schema { return array(desc, str("")) }

func warrantViewProps() schema {
	return schema{
		"protocol_version":          str("EWP-0.2.0"),
		"proposition_id":            str(""),
		"view_id":                   str("The snapshot evaluated."),
		"policy_id":                 str("reference-v2"),
		"policy_version":            str("reference-v2"),
		"evaluated_at":              str("T exactly as given."),
		"warrant":                   axesSchema(),
		"supporting_evidence_ids":   idList("Available supporting evidence."),
		"opposing_evidence_ids":     idList("Available opposing evidence."),
		"independent_lineage_count": schema{"type": "integer", "description": "Distinct lineage ids over available records."},
		"checks":                    idList("All check ids."),
		"freshest_check":            nullableStr("The newest class-conferring check."),
		"stale":                     boolean("Whether the class-conferring check is stale."),
		"open_conflicts":            idList(""),
		"resolved_conflicts":        idList(""),
		"omitted_sources":           idList(""),
		"derived_from":              idList(""),
		"supersedes":                idList(""),
		"superseded_by":             idList(""),
		"falsification_conditions":  idList("What would change the verdict."),
	}
}

var warrantViewRequired = []string{"protocol_version", "proposition_id", "view_id",
	"policy_id", "policy_version", "evaluated_at", "warrant"}

func warrantNowOutput() schema {
	props := warrantViewProps()
	props["inline_origins_demoted"] = idList("Inline views only: trusted origins rewritten to inline:<origin> because the call was not an attested ingest.")
	return openObject("A WarrantView (EWP.md §6).", props, warrantViewRequired...)
}
