package warrant_test

import (
	"slices"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// The diagnostics follow the rules fitted to the reference's whole
// WarrantViews (docs/decisions.md). Each case below isolates one rule;
// the differential corpus test in conformance checks them all at scale.

const diagT = "2026-10-15T12:00:00Z"

func diagCheck(id, method, origin, at, result string) warrant.Check {
	return warrant.Check{CheckID: id, Method: method, ObservedAt: at, Result: result,
		Source: warrant.SourceRef{SourceID: "s-" + id, LineageID: "L-" + id, OriginType: origin}}
}

func diagEval(t *testing.T, v *warrant.View) *warrant.WarrantView {
	t.Helper()
	if v.RetrievalScope == "" {
		v.RetrievalScope = warrant.DefaultRetrievalScope
	}
	if v.Freshness == 0 {
		v.Freshness = 2592000
	}
	w, err := warrant.Evaluate(v, diagT)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestSupersededByListsOnlyEdgesFromP(t *testing.T) {
	w := diagEval(t, &warrant.View{PropositionID: "P", Lineage: []warrant.LineageEdge{
		{Kind: warrant.KindSupersededBy, FromID: "Q", ToID: "unrelated"},
		{Kind: warrant.KindSupersededBy, FromID: "P:eu", ToID: "P2"},
		{Kind: warrant.KindSupersededBy, FromID: "P", ToID: "P1"},
		{Kind: warrant.KindDerivedFrom, FromID: "Q", ToID: "b"},
		{Kind: warrant.KindDerivedFrom, FromID: "P", ToID: "a"},
	}})
	if !slices.Equal(w.SupersededBy, []string{"P1", "P2"}) {
		t.Errorf("superseded_by %q, want [P1 P2]: only edges from P or a variant, sorted", w.SupersededBy)
	}
	if !slices.Equal(w.DerivedFrom, []string{"a", "b"}) {
		t.Errorf("derived_from %q, want [a b]: every derived_from edge, sorted", w.DerivedFrom)
	}
}

func TestFreshestCheckWithVerificationNone(t *testing.T) {
	w := diagEval(t, &warrant.View{PropositionID: "P", Checks: []warrant.Check{
		diagCheck("k-old", "unknown_method", "tool", "2026-10-01T00:00:00Z", warrant.Supports),
		diagCheck("k-new", "unknown_method", "tool", "2026-10-14T00:00:00Z", warrant.Supports),
		diagCheck("k-future", "unknown_method", "tool", "2026-10-16T00:00:00Z", warrant.Supports),
	}})
	if w.Warrant.Verification != warrant.VerNone || w.FreshestCheck == nil || *w.FreshestCheck != "k-new" || w.Stale {
		t.Errorf("verification %s, freshest %v, stale %v; want NONE, the newest available check k-new, not stale",
			w.Warrant.Verification, w.FreshestCheck, w.Stale)
	}
	if !slices.Equal(w.Checks, []string{"k-future", "k-new", "k-old"}) {
		t.Errorf("checks %q, want every check id sorted", w.Checks)
	}
}

func TestRationaleCodes(t *testing.T) {
	cases := []struct {
		name string
		view warrant.View
		want []string
	}{
		{"empty view", warrant.View{PropositionID: "P"},
			[]string{"acceptance.none", "sufficiency.none", "verification.none"}},
		{"implied conflict, opposing and future checks, laundered external method", warrant.View{
			PropositionID: "P",
			Conflicts:     []warrant.Conflict{{ConflictID: "c", Status: warrant.StatusResolved, PropositionIDs: []string{"P"}}},
			Checks: []warrant.Check{
				diagCheck("k1", "tool_observation", "tool", "2026-10-14T00:00:00Z", warrant.Supports),
				diagCheck("k2", "inference", "turn", "2026-10-14T00:00:00Z", warrant.Opposes),
				diagCheck("k3", "document_quote", "summary", "2026-10-20T00:00:00Z", warrant.Inconclusive),
			}},
			[]string{"acceptance.none", "conflict.implied_polarity", "verification.external", "verification.inconclusive_present",
				"verification.laundered_endogenous", "verification.not_available_at_t", "verification.opposing_check"}},
		{"open row, future assertion and evidence", warrant.View{
			PropositionID: "P",
			Conflicts:     []warrant.Conflict{{ConflictID: "c", Status: warrant.StatusOpen, PropositionIDs: []string{"P"}}},
			Assertions:    []warrant.Assertion{{AssertionID: "a", AssertedAt: "garbage"}},
			Evidence:      []warrant.Evidence{{EvidenceID: "e", Polarity: warrant.Supports, ObservedAt: "2026-10-16"}},
		}, []string{"acceptance.none", "availability.future_assertion", "availability.future_evidence", "conflict.open",
			"sufficiency.none", "verification.none"}},
		{"stale check named under SUPERSEDED", warrant.View{
			PropositionID: "P",
			Lineage:       []warrant.LineageEdge{{Kind: warrant.KindSupersededBy, FromID: "P", ToID: "P2"}},
			Assertions:    []warrant.Assertion{{AssertionID: "a", AssertedAt: "2026-01-01"}},
			Checks:        []warrant.Check{diagCheck("k", "tool_observation", "tool", "2026-01-01T00:00:00Z", warrant.Supports)},
		}, []string{"acceptance.tentative", "currency.stale_check", "currency.superseded", "verification.external"}},
	}
	for _, c := range cases {
		w := diagEval(t, &c.view)
		if got := w.Warrant.RationaleCodes; !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStrengthFittedWeights(t *testing.T) {
	empty := diagEval(t, &warrant.View{PropositionID: "P"})
	// UNACCEPTED 0.2, no lineage −0.05, INSUFFICIENT −0.05.
	if empty.Warrant.Strength != 0.1 {
		t.Errorf("empty view strength %v, want 0.1", empty.Warrant.Strength)
	}
	human := diagEval(t, &warrant.View{PropositionID: "P", Checks: []warrant.Check{
		diagCheck("k", "human_review", "human", "2026-10-14T00:00:00Z", warrant.Supports)}})
	// UNACCEPTED 0.2 + HUMAN 0.25, one lineage.
	if human.Warrant.Acceptance != warrant.Unaccepted || human.Warrant.Strength != 0.45 {
		t.Errorf("checks-only view: %s %v, want UNACCEPTED 0.45", human.Warrant.Acceptance, human.Warrant.Strength)
	}
}

// The sorted omitted_sources must not reorder the view's own list.
func TestOmittedSourcesSortedWithoutTouchingView(t *testing.T) {
	v := &warrant.View{PropositionID: "P", OmittedSources: []string{"b", "a"}}
	w := diagEval(t, v)
	if !slices.Equal(w.OmittedSources, []string{"a", "b"}) || !slices.Equal(v.OmittedSources, []string{"b", "a"}) {
		t.Errorf("omitted_sources %q, view's %q; want [a b] and [b a]", w.OmittedSources, v.OmittedSources)
	}
}
