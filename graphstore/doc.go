// Package graphstore keeps the concept graph of the grounding guard in the
// EWP ledger (GROUNDING.md §0): every primitive revision is one row of the
// ledger's append-only, hash-chained primitive_revisions table, and the
// current graph is the latest revision of each primitive.
//
// The grounding package decides what a valid graph is; this package only
// moves revisions between it and the ledger, with two guarantees:
//
//   - Reads are cheap. Store.Current asks the ledger for its graph version
//     (one indexed query) and rebuilds the in-memory graph only when the
//     version moved, so a server answers check_grounding from memory.
//   - Writes are whole or not at all. A document ingest or a learned fill
//     is validated inside the ledger's write transaction against the live
//     rows, so a concurrent writer cannot slip a clashing name or a cycle
//     in between the check and the append.
package graphstore
