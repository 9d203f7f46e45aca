package snapshot_test

import (
	"testing"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

func newEvidence() warrant.Evidence {
	return warrant.Evidence{EvidenceID: "e3", Polarity: warrant.Supports, Content: "seen",
		ObservedAt: "2026-09-03T00:00:00Z",
		Source:     warrant.SourceRef{ContentHash: "sha256:x", ObservedAt: "2026-09-03T00:00:00Z"}}
}

func TestAppendFillsSourceDefaults(t *testing.T) {
	latest := decode(t, viewJSON)
	next, err := snapshot.AppendEvidence(latest, newEvidence())
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Evidence) != 3 || len(latest.Evidence) != 2 {
		t.Fatalf("evidence: next %d, latest %d (latest must not change)", len(next.Evidence), len(latest.Evidence))
	}
	var e warrant.Evidence
	for _, x := range next.Evidence {
		if x.EvidenceID == "e3" {
			e = x
		}
	}
	s := e.Source
	if s.SourceID != "e3" || s.LineageID != "e3" || s.SnapshotID != "e3" || s.OriginType != "extract" || s.OriginLocator != "mcp:e3" {
		t.Fatalf("defaults not applied: %+v", s)
	}
	if e.PropositionID != "P" {
		t.Fatalf("proposition_id = %q", e.PropositionID)
	}
	if next.ViewID != warrant.DerivedViewID(next) || !next.ViewIDDerived {
		t.Fatalf("view id %q is not the derived id %q", next.ViewID, warrant.DerivedViewID(next))
	}
}

func TestAppendKeepsGivenSource(t *testing.T) {
	e := newEvidence()
	e.Source = warrant.SourceRef{SourceID: "s9", LineageID: "L9", OriginType: "api", OriginLocator: "https://x",
		SnapshotID: "snap9", ContentHash: "h9", ObservedAt: "2026-09-03T00:00:00Z"}
	next, err := snapshot.AppendEvidence(decode(t, viewJSON), e)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range next.Evidence {
		if x.EvidenceID == "e3" && (x.Source.SourceID != "s9" || x.Source.OriginType != "api" || x.Source.LineageID != "L9") {
			t.Fatalf("given source fields were replaced: %+v", x.Source)
		}
	}
}

func TestAppendRefusals(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(e *warrant.Evidence)
		code  string
		field string
	}{
		{"missing content hash", func(e *warrant.Evidence) { e.Source.ContentHash = "" }, warrant.CodeMissingContentHash, "evidence.source.content_hash"},
		{"missing source time", func(e *warrant.Evidence) { e.Source.ObservedAt = "" }, warrant.CodeMissingObservedAt, "evidence.source.observed_at"},
		{"missing record time", func(e *warrant.Evidence) { e.ObservedAt = "" }, warrant.CodeMissingObservedAt, "evidence.observed_at"},
		{"missing polarity", func(e *warrant.Evidence) { e.Polarity = "" }, warrant.CodeInvalidView, "evidence.polarity"},
		{"unknown polarity", func(e *warrant.Evidence) { e.Polarity = "maybe" }, warrant.CodeInvalidView, ""},
		{"missing id", func(e *warrant.Evidence) { e.EvidenceID = "" }, warrant.CodeInvalidView, "evidence.evidence_id"},
		{"existing id, other content", func(e *warrant.Evidence) { e.EvidenceID = "e1" }, warrant.CodeImmutableRecord, "evidence[0]"},
		{"existing source, other ref", func(e *warrant.Evidence) {
			e.Source.SourceID = "s2"
		}, warrant.CodeImmutableRecord, "evidence[0].source"},
		{"foreign proposition", func(e *warrant.Evidence) { e.PropositionID = "Q" }, warrant.CodeInvalidView, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEvidence()
			c.edit(&e)
			_, err := snapshot.AppendEvidence(decode(t, viewJSON), e)
			we := wantCode(t, err, c.code)
			if c.field != "" && we.Field != c.field {
				t.Fatalf("field %q, want %q (%v)", we.Field, c.field, we)
			}
		})
	}
}

func TestAppendToNothingIsMissingView(t *testing.T) {
	_, err := snapshot.AppendCheck(nil, warrant.Check{CheckID: "k"})
	wantCode(t, err, warrant.CodeMissingView)
}

func TestAppendRetryIsNoOp(t *testing.T) {
	latest := decode(t, viewJSON)
	next, err := snapshot.AppendEvidence(latest, newEvidence())
	if err != nil {
		t.Fatal(err)
	}
	again, err := snapshot.AppendEvidence(next, newEvidence())
	if err != nil {
		t.Fatal(err)
	}
	if again != next {
		t.Fatal("appending a record the latest snapshot holds made a new snapshot")
	}
}

func TestAppendCheck(t *testing.T) {
	c := warrant.Check{CheckID: "k1", Method: "tool_observation", Scope: "psql", Result: warrant.Opposes,
		ObservedAt: "2026-09-20T00:00:00Z", Subjects: []string{"db-1"},
		Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}
	next, err := snapshot.AppendCheck(decode(t, viewJSON), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Checks) != 1 || next.Checks[0].Source.OriginType != "extract" {
		t.Fatalf("checks = %+v", next.Checks)
	}
	c.Scope = ""
	_, err = snapshot.AppendCheck(decode(t, viewJSON), c)
	wantCode(t, err, warrant.CodeInvalidView)
}
