package mcp

import (
	"context"
	"errors"

	"github.com/ewp-go/ewp/warrant"
)

// Write tools. Each needs the ingest role, which handler checks before it
// looks at the arguments, so a caller without the role learns nothing
// about how its payload would have fared.

func writeOutput(desc string, extra schema) schema {
	props := schema{
		"proposition_id": str(""),
		"view_id":        str("The snapshot that now holds the record(s)."),
		"stored":         boolean("false when an identical snapshot was already stored (a no-op)."),
	}
	for k, v := range extra {
		props[k] = v
	}
	return object(desc, props, "proposition_id", "view_id", "stored")
}

func (s *Server) evidenceViewPutTool() toolSpec {
	in := schema{
		"properties": schema{
			"view":               viewSchema("The EvidenceView to store as an immutable snapshot. Never a WarrantView."),
			"ingest_attestation": attestationParam,
		},
		"required": []string{"view"},
	}
	t := writeTool("evidence_view_put",
		"Store an EvidenceView as an immutable snapshot of its proposition (ingest role only). Re-sending an "+
			"identical snapshot is a no-op; different content under an existing view_id is refused.",
		in, writeOutput("The stored snapshot.", nil), s.evidenceViewPut)
	t.pre = refuseWarrantArgs
	return t
}

// refuseWarrantArgs catches a WarrantView sent as the arguments themselves.
func refuseWarrantArgs(_ context.Context, a args) error {
	if looksLikeWarrantView(a) {
		return refuse(warrant.CodePersistWarrant, "", "the arguments are a WarrantView; warrant is computed on "+
			"every call and never stored: send {\"view\": <EvidenceView>}")
	}
	return nil
}

func (s *Server) evidenceViewPut(ctx context.Context, a args) (any, error) {
	attested, err := attestation(a)
	if err != nil {
		return nil, err
	}
	raw, ok := a["view"]
	if !ok {
		return nil, badArg("view", "is required: the EvidenceView to store")
	}
	v, err := s.decodeInlineView(raw, warrant.CodePersistWarrant)
	if err != nil {
		return nil, err
	}
	if err := requireAttested(trustedIn(v), attested); err != nil {
		return nil, err
	}
	stored, err := s.store.Put(ctx, v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"proposition_id": v.PropositionID, "view_id": v.ViewID, "stored": stored}, nil
}

// recordSourceSchema is the SourceRef of an appended record: only the hash
// and the observation time are required, because they cannot be invented.
func recordSourceSchema() schema {
	s := sourceRefSchema("Provenance of the record. content_hash and observed_at are required; source_id " +
		"defaults to the record id, lineage_id and snapshot_id to source_id, origin_type to \"extract\", " +
		"origin_locator to \"mcp:<source_id>\".")
	s["required"] = []string{"content_hash", "observed_at"}
	return s
}

func (s *Server) evidenceRecordTool() toolSpec {
	in := schema{
		"properties": schema{
			"proposition_id":       propositionIDParam,
			"evidence_id":          nonEmpty("Id of the new evidence item."),
			"polarity":             enum("Required; never assumed.", warrant.Supports, warrant.Opposes),
			"content":              str("What was observed."),
			"observed_at":          nonEmpty("When it was observed (ISO 8601). Default: source.observed_at."),
			"source":               recordSourceSchema(),
			"assertion_text":       str("Optional: also append an assertion with this text (id \"a:<evidence_id>\")."),
			"asserted_by":          nonEmpty("Who asserts assertion_text. Default: the source_id."),
			"assertion_confidence": number("Confidence of assertion_text, a finite number. Default 1.0."),
			"ingest_attestation":   attestationParam,
		},
		"required": []string{"proposition_id", "evidence_id", "polarity", "content", "source"},
	}
	return writeTool("evidence_record",
		"Append one evidence item (and optionally an assertion) to a stored proposition as a new snapshot "+
			"(ingest role only).", in, writeOutput("The new snapshot.", schema{"evidence_id": str("")}), s.evidenceRecord)
}

func (s *Server) evidenceRecord(ctx context.Context, a args) (any, error) {
	pid, err := a.requiredID("", "proposition_id")
	if err != nil {
		return nil, err
	}
	e, err := decodeEvidence(a, pid)
	if err != nil {
		return nil, err
	}
	in := EvidenceInput{Evidence: e}
	if in.Assertion, err = decodeAssertion(a, e); err != nil {
		return nil, err
	}
	if err := attestedSource(a, e.Source); err != nil {
		return nil, err
	}
	v, err := s.store.AppendEvidence(ctx, pid, in)
	if err != nil {
		return nil, appendError(err, pid)
	}
	return map[string]any{"proposition_id": pid, "view_id": v.ViewID, "stored": true, "evidence_id": e.EvidenceID}, nil
}

func decodeEvidence(a args, pid string) (warrant.Evidence, error) {
	e := warrant.Evidence{PropositionID: pid}
	var err error
	if e.EvidenceID, err = a.requiredID("", "evidence_id"); err != nil {
		return e, err
	}
	if e.Polarity, err = enumArg(a, "polarity", warrant.Supports, warrant.Opposes); err != nil {
		return e, err
	}
	if e.Content, err = requiredText(a, "content"); err != nil {
		return e, err
	}
	if e.Source, err = decodeSource(a, e.EvidenceID); err != nil {
		return e, err
	}
	e.ObservedAt, err = recordTime(a, e.Source)
	return e, err
}

func decodeAssertion(a args, e warrant.Evidence) (*warrant.Assertion, error) {
	text, ok, err := a.text("", "assertion_text")
	if err != nil || !ok {
		if err == nil && (a.has("asserted_by") || a.has("assertion_confidence")) {
			err = badArg("assertion_text", "is required when asserted_by or assertion_confidence is given")
		}
		return nil, err
	}
	by, ok, err := a.id("", "asserted_by")
	if err != nil {
		return nil, err
	}
	if !ok {
		by = e.Source.SourceID
	}
	conf, ok, err := a.number("", "assertion_confidence")
	if err != nil {
		return nil, err
	}
	if !ok {
		conf = 1
	}
	return &warrant.Assertion{AssertionID: "a:" + e.EvidenceID, Text: text, AssertedBy: by,
		Confidence: conf, Source: e.Source, AssertedAt: e.ObservedAt, PropositionID: e.PropositionID}, nil
}

func (s *Server) checkRecordTool() toolSpec {
	in := schema{
		"properties": schema{
			"proposition_id":     propositionIDParam,
			"check_id":           nonEmpty("Id of the new check."),
			"method":             methodParam,
			"scope":              str("What was checked, in words."),
			"result":             enum("Required; never assumed.", warrant.Supports, warrant.Opposes, warrant.Inconclusive),
			"observed_at":        nonEmpty("When the check ran (ISO 8601). Default: source.observed_at."),
			"subjects":           stringList("Subject ids the check was about."),
			"source":             recordSourceSchema(),
			"ingest_attestation": attestationParam,
		},
		"required": []string{"proposition_id", "check_id", "method", "scope", "result", "source"},
	}
	return writeTool("check_record",
		"Append one verification check to a stored proposition as a new snapshot (ingest role only). A check "+
			"raises verification to EXTERNAL or HUMAN only with a trusted origin, which must be attested.",
		in, writeOutput("The new snapshot.", schema{"check_id": str("")}), s.checkRecord)
}

func (s *Server) checkRecord(ctx context.Context, a args) (any, error) {
	pid, err := a.requiredID("", "proposition_id")
	if err != nil {
		return nil, err
	}
	c, err := decodeCheck(a)
	if err != nil {
		return nil, err
	}
	if err := attestedSource(a, c.Source); err != nil {
		return nil, err
	}
	v, err := s.store.AppendCheck(ctx, pid, CheckInput{Check: c})
	if err != nil {
		return nil, appendError(err, pid)
	}
	return map[string]any{"proposition_id": pid, "view_id": v.ViewID, "stored": true, "check_id": c.CheckID}, nil
}

func decodeCheck(a args) (warrant.Check, error) {
	var c warrant.Check
	var err error
	if c.CheckID, err = a.requiredID("", "check_id"); err != nil {
		return c, err
	}
	if c.Method, err = a.requiredID("", "method"); err != nil {
		return c, err
	}
	if c.Scope, err = requiredText(a, "scope"); err != nil {
		return c, err
	}
	if c.Result, err = enumArg(a, "result", warrant.Supports, warrant.Opposes, warrant.Inconclusive); err != nil {
		return c, err
	}
	if c.Subjects, _, err = a.strings("", "subjects"); err != nil {
		return c, err
	}
	if c.Subjects == nil {
		c.Subjects = []string{}
	}
	if c.Source, err = decodeSource(a, c.CheckID); err != nil {
		return c, err
	}
	c.ObservedAt, err = recordTime(a, c.Source)
	return c, err
}

// enumArg reads a required closed-enum value. A wrong or missing value is
// invalid evidence: the protocol never guesses polarity or result.
func enumArg(a args, name string, allowed ...string) (string, error) {
	v, ok, err := a.str("", name)
	if err == nil && ok {
		for _, x := range allowed {
			if v == x {
				return v, nil
			}
		}
	}
	return "", refuse(warrant.CodeInvalidView, name, "is required and must be one of %v; it is never assumed", allowed)
}

func requiredText(a args, name string) (string, error) {
	s, ok, err := a.text("", name)
	if err == nil && !ok {
		err = badArg(name, "is required (a string)")
	}
	return s, err
}

// decodeSource builds a complete SourceRef for record id. The hash and the
// observation time are never invented; the rest have neutral defaults, and
// the default origin "extract" is untrusted.
func decodeSource(a args, recordID string) (warrant.SourceRef, error) {
	var src warrant.SourceRef
	obj, ok, err := a.object("", "source")
	if err != nil {
		return src, err
	}
	if !ok {
		obj = args{}
	}
	if err := obj.only("source", paramNames(recordSourceSchema())); err != nil {
		return src, err
	}
	if src.ContentHash, err = provenance(obj, "content_hash", warrant.CodeMissingContentHash); err != nil {
		return src, err
	}
	if src.ObservedAt, err = provenance(obj, "observed_at", warrant.CodeMissingObservedAt); err != nil {
		return src, err
	}
	return sourceDefaults(obj, src, recordID)
}

func provenance(obj args, name, code string) (string, error) {
	v, ok, err := obj.text("source", name)
	if err != nil {
		return "", err
	}
	if !ok || v == "" {
		return "", refuse(code, "source."+name, "is required: an appended record never gets invented provenance")
	}
	return v, nil
}

func sourceDefaults(obj args, src warrant.SourceRef, recordID string) (warrant.SourceRef, error) {
	fields := []struct {
		name string
		dst  *string
		def  func() string
	}{
		{"source_id", &src.SourceID, func() string { return recordID }},
		{"lineage_id", &src.LineageID, func() string { return src.SourceID }},
		{"snapshot_id", &src.SnapshotID, func() string { return src.SourceID }},
		{"origin_type", &src.OriginType, func() string { return "extract" }},
		{"origin_locator", &src.OriginLocator, func() string { return "mcp:" + src.SourceID }},
	}
	for _, f := range fields {
		v, ok, err := obj.id("source", f.name)
		if err != nil {
			return src, err
		}
		if !ok {
			v = f.def()
		}
		*f.dst = v
	}
	var err error
	if src.ExtractorID, err = optionalID(obj, "extractor_id"); err != nil {
		return src, err
	}
	src.ParentSourceID, err = optionalID(obj, "parent_source_id")
	return src, err
}

func optionalID(obj args, name string) (*string, error) {
	v, ok, err := obj.id("source", name)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

// recordTime is the record's own observed_at, defaulting to the time its
// source was observed.
func recordTime(a args, src warrant.SourceRef) (string, error) {
	t, ok, err := a.text("", "observed_at")
	if err != nil || (ok && t != "") {
		return t, err
	}
	return src.ObservedAt, nil
}

func attestedSource(a args, src warrant.SourceRef) error {
	attested, err := attestation(a)
	if err != nil {
		return err
	}
	if isTrusted(src.OriginType) {
		return requireAttested([]string{src.OriginType}, attested)
	}
	return nil
}

// appendError names the proposition when it has nothing to append to.
func appendError(err error, pid string) error {
	if errors.Is(err, ErrNotFound) {
		return refuse(warrant.CodeMissingView, "proposition_id",
			"no stored snapshot of proposition %q to append to; store one with evidence_view_put first", pid)
	}
	return err
}
