// Package sqlite is the SQLite evidence store of EWP §9: immutable
// snapshots of EvidenceViews, keyed by (proposition_id, view_id), with the
// record-identity rules of package snapshot, atomic appends, a hash chain
// over every stored event, and text search over assertions. It uses the
// pure-Go modernc.org/sqlite driver, so the binaries need no C toolchain.
//
// # Files and concurrency
//
// The file is in WAL mode with a busy timeout: many processes may read
// while one writes, and writers queue. Every write is one IMMEDIATE
// transaction, so a batch is stored whole or not at all and an append reads
// "latest" under the write lock. Readers see only committed snapshots.
//
// [Open] never creates a file (a missing path is "ledger not found");
// Options.ReadOnly opens it with mode=ro and query_only. On storage the
// process cannot write (read-only mount, immutable file or directory, no
// write permission on the directory) SQLite cannot create the -shm index
// WAL readers need; when none exists either, no writer has the file open
// and the ledger is opened immutable=1 (no locks, no WAL), which is what
// lets an evaluate-only server and verify serve it. See readOnlyParams for
// why that is safe on read-only storage and what a permission split must
// not do; [Ledger.Immutable] reports it. [Create] and
// [OpenOrCreate] are for writers. A file whose schema_version differs from
// [SchemaVersion] is refused with a message saying so.
//
// # Schema (version 1)
//
//	ledger_meta(key, value)                        schema_version; search_text
//	                                               ("casefold": the index holds folded text)
//	snapshots(seq, proposition_id, view_id, body, body_sha256,
//	          canonical_sha256, created_at)         UNIQUE(proposition_id, view_id)
//	records(proposition_id, kind, record_id, sum, view_id)
//	                                               first content of every id (§9)
//	events(seq, tbl, row_seq, payload, prev_hash, hash)
//	                                               hash = sha256(prev_hash ‖ payload)
//	primitive_revisions(seq, primitive_id, name_fold, body, created_at)
//	assertion_fts                                  FTS5 (trigram) over assertion text,
//	                                               Unicode case-folded (search_text)
//
// body is the stored form warrant.Encode(v); reading it back with
// warrant.DecodeView gives the view that was put. The payload of an event
// is the canonical JSON of the row it records (with the body as its
// sha256), so editing any stored byte breaks the chain at that event and
// [Ledger.Verify] names it. Triggers make UPDATE and DELETE fail on every
// table except the FTS index, which SQLite cannot guard (virtual table) and
// which is derived, never authoritative.
//
// # Verification
//
// [Ledger.Verify] (`ewp-ingest verify`) checks every table, not only the
// chain: sqlite_master against the DDL this build creates (a dropped or
// altered trigger, an extra or missing table or index is a break),
// ledger_meta against the keys this build writes, each event against its
// predecessor and the row it records, every body against the kernel, and
// the derived tables (records, assertion_fts) rebuilt from the snapshots
// and merged against the stored ones in both directions, so a planted
// identity row (which would make a later honest write fail citing a view
// that never existed) or a planted search row is found. It streams in
// proposition order; memory is bounded by one proposition's records, and
// SQLite sorts the search index on disk when it is large.
//
// Writers do not run Verify (it costs the whole ledger, and a server
// appends one snapshot per call). Every write transaction checks, under
// the write lock and in constant time, what extending the chain would
// bury: the last event's hash recomputes from its prev_hash and payload,
// its prev_hash is the previous event's hash, the row it records still
// matches it (a snapshot's body by its sha256), every append-only trigger is
// there as this build makes it and no other trigger is, and the newest
// snapshot and graph revision are the ones the chain records. Otherwise
// the write is refused with [ledger.ErrBrokenChain], telling the operator
// to run `ewp-ingest verify`. An edit deeper in the file (an older event or row,
// a derived-table row) is not seen by writers: only Verify finds it, so
// run it on a schedule and before trusting a file from elsewhere.
//
// What no check inside the file can see is a chain cut off at its end
// together with everything the cut events derived: the remaining file is
// a valid, shorter ledger. [ledger.Head] names the last event as SEQ:HASH
// (verify prints the one it verified; a pipeline keeps the one after each
// load), and [Ledger.VerifyHead] (`ewp-ingest verify --head SEQ:HASH`)
// proves the ledger still holds that event.
//
// # Refusals and failures
//
// Every write refuses a view holding a lone UTF-16 surrogate
// (snapshot.CheckSurrogates, CodeLoneSurrogate): clients' JSON libraries
// turn it into U+FFFD, so it could never be read back by the id it was
// stored under.
//
// Options.MaxViewBytes (default warrant.DefaultLimits.MaxViewBytes)
// bounds a snapshot's stored form: writes refuse a bigger view, and reads
// refuse a bigger stored one by its length, before its bytes are read
// (CodeLimitExceeded), so no request can make the server hold an
// unbounded body. List skips such a snapshot.
//
// A refusal of the input is a *warrant.Error (EWP code, field, rule); in a
// batch it is wrapped in a *ledger.BatchError naming the view's index. A
// storage failure is a *ledger.Error. The two map to different exit codes
// and MCP errors.
package sqlite
