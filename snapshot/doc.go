// Package snapshot holds the store-neutral rules of EWP §9 and §10 that
// every evidence store must apply identically: record identity across
// snapshots, snapshot immutability, atomic appends and the attestation of
// trusted origins. It does no I/O; a store (the SQLite ledger, the JSON
// directory store) keeps the data and asks this package what is allowed.
//
// # Record identity (§9)
//
// Within one proposition an id names one record across every snapshot.
// [Fingerprints] reduces a view to one [Fingerprint] per identified thing:
//
//	KindAssertion  assertion_id → the whole assertion, its SourceRef included
//	KindEvidence   evidence_id  → the whole evidence item
//	KindCheck      check_id     → the whole check
//	KindSource     source_id    → the full SourceRef
//	KindConflict   conflict_id  → only the sorted participants, because a
//	                              conflict's status and note may change
//
// A store keeps the fingerprints of everything it has stored for a
// proposition (the kind, id, sum and the view that first stored it) and
// calls [Check] (or [CheckFingerprints], when it computed the fingerprints
// ahead of its transaction) with a [Lookup] over them before storing a
// new view. Only the first content stored under a key needs keeping: a
// later view with other content is refused, so all agree with the first. The
// refusal is a *warrant.Error with Code warrant.CodeImmutableRecord, the
// field path of the offending record in the new view (e.g. "checks[2]")
// and a rule naming the view that stored the earlier content:
//
//	EWP_REFUSE_IMMUTABLE_RECORD: checks[2]: check id "k1" was stored with
//	different content in view "v-…"; give the changed check a new id
//
// [Map] is a ready Lookup for stores that load the index into memory.
//
// # Snapshot immutability
//
// A snapshot is named by (proposition_id, view_id). Its identity is its
// stored form, warrant.Encode(v), so [StoredSum] is what a store keeps and
// [CheckSnapshot] decides between "identical re-put, a no-op" (nil) and
// "different snapshot under an existing view_id" (CodeImmutableRecord).
//
// # Appends (§9, §10)
//
// [Append] (and its shorthands [AppendEvidence] and [AppendCheck]) builds
// latest + [Records] as a new snapshot with a derived view id. The store must run them inside the same
// write transaction that reads "latest", so that concurrent appends never
// lose each other. Incremental writes never invent provenance: an empty
// source.content_hash or source.observed_at is refused with
// CodeMissingContentHash / CodeMissingObservedAt, polarity is never
// assumed, and only the identifying SourceRef fields default (see
// [FillSource]). An empty string counts as missing. Appending a record that the latest snapshot already holds
// unchanged returns latest itself, so retries are idempotent.
//
// # Lone surrogates
//
// [CheckSurrogates] refuses (CodeLoneSurrogate, naming the field) a view
// holding a lone UTF-16 surrogate in any string, adapter_meta included.
// Every store calls it on every write path (puts and appends): clients'
// JSON libraries rewrite such a string to U+FFFD, so it could never be
// asked for again under the id it was stored with.
//
// # Trusted origins (§10)
//
// [TrustedOrigins] lists the trusted origin types a view carries and
// [RequireAttestation] refuses them (CodeUnattestedTrusted) unless the
// writer attested them.
//
// # Shared tests
//
// Package snapshottest holds the §9 history table ([snapshottest.Run]) that
// every store runs, and synthetic views for benchmarks.
package snapshot
