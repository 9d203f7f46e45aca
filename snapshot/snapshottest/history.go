// Package snapshottest is a store-neutral conformance table for the §9
// snapshot-history rules. Any evidence store (the SQLite ledger, the JSON
// directory store) runs the same cases with [Run], so both apply identical
// rules:
//
//	func TestHistory(t *testing.T) {
//		snapshottest.Run(t, func(t *testing.T) snapshottest.Store { return myStore(t) })
//	}
//
// Each case starts from an empty store and puts views in order; every step
// says whether the view is stored, is an identical re-put (a no-op) or is
// refused, and for a refusal with which EWP code and at which field.
package snapshottest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// Store is the part of a store the table exercises.
type Store interface {
	// Put stores one view. stored is false for an identical re-put. A
	// refusal must be (or wrap) a *warrant.Error.
	Put(v *warrant.View) (stored bool, err error)
}

// Outcome is what a step expects.
type Outcome int

// Outcomes of one put.
const (
	Stored Outcome = iota
	Unchanged
	Refused
)

func (o Outcome) String() string {
	return [...]string{"stored", "unchanged", "refused"}[o]
}

// Step puts one view.
type Step struct {
	// JSON is the view as a client would send it.
	JSON string
	Want Outcome
	// Code and Field are checked for Refused steps.
	Code  string
	Field string
}

// Case is one history.
type Case struct {
	Name  string
	Steps []Step
}

// Run runs every case against a fresh store from open.
func Run(t *testing.T, open func(t *testing.T) Store) {
	t.Helper()
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			s := open(t)
			for i, st := range c.Steps {
				runStep(t, s, i, st)
			}
		})
	}
}

func runStep(t *testing.T, s Store, i int, st Step) {
	t.Helper()
	v, err := warrant.DecodeView([]byte(st.JSON))
	if err != nil {
		t.Fatalf("step %d: the table's view does not decode: %v", i, err)
	}
	stored, err := s.Put(v)
	got := Stored
	switch {
	case err != nil:
		got = Refused
	case !stored:
		got = Unchanged
	}
	if got != st.Want {
		t.Fatalf("step %d: got %s (err %v), want %s", i, got, err, st.Want)
	}
	if got != Refused {
		return
	}
	var we *warrant.Error
	if !errors.As(err, &we) {
		t.Fatalf("step %d: refusal is not a *warrant.Error: %v", i, err)
	}
	if we.Code != st.Code || (st.Field != "" && we.Field != st.Field) {
		t.Fatalf("step %d: refused with %s at %q (%s), want %s at %q", i, we.Code, we.Field, we.Rule, st.Code, st.Field)
	}
}

// obj is a JSON object under construction.
type obj = map[string]any

// encode renders a view; the table is written as Go maps so each case can
// say in one line how it differs from the base view.
func encode(v obj) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
