// Package grounding decides whether the concepts an action touches are
// grounded, to the depth the graph demands, in an authored concept graph.
// It re-implements the grounding engine of the Python library VRE as
// restated in shared/spec/GROUNDING.md (§1 data model, §2 algorithm, §4
// learning).
//
// The package is pure: it performs no I/O, reads no clock and keeps no
// mutable globals. Callers pass time in, and persist what the package
// returns. A Graph is an immutable snapshot; every change (Apply,
// ApplyDocument, Learn) yields revisions and, on Apply, a new Graph.
//
// # Stored form
//
// A Primitive revision marshals to the JSON documented on Primitive. The
// ledger stores one such payload per revision, keyed by Primitive.ID and
// Fold(Primitive.Name); NewGraph rebuilds the current graph from them.
package grounding
