// Package sqlite is the decision log of package audit in an SQLite file
// (modernc.org/sqlite, no cgo): the store behind ewp-mcp's accountable
// gate and ewp-audit. It implements audit.Log; the PostgreSQL store,
// audit/postgres, is a sibling package writing the same chain (one package
// per outside dependency; the domain stays in package audit, what the
// stores share in audit/auditchain).
//
// # Where the log lives
//
// The log is a file of its own, never inside the evidence ledger, which
// stays read-only for the server. For the ledger at X the log is at
// DefaultPath(X) = X + ".audit" (ewp.sqlite → ewp.sqlite.audit), unless --audit
// names another file. ewp-mcp creates it at start-up ([OpenOrCreate]);
// ewp-audit only opens it ([Open]), so a mistyped path is an error, not a
// new, empty log.
//
// # Schema (version 3)
//
//	audit_meta(key, value)                            schema_version = 3
//	decision_bodies(first_event, first_seq, n, head, first_id, last_id, bodies)
//	                     the bodies of n decisions one commit recorded, ≤ 256 KiB a row (events
//	                     first_event…, seqs first_seq…), each followed by '\n';
//	                     head is the hash of the last one's event; first_id, last_id
//	                     the least and greatest of its in-order decision_ids (NULL: none),
//	                     partial index on first_id
//	decisions(seq, event, decision_id, time_ns, outcome, proposition_id,
//	          credential, idem_key, approval_id, hash)   special decisions only;
//	                     seq the decision's number in recording order;
//	                     UNIQUE(decision_id); UNIQUE(credential, idem_key) where keyed;
//	                     partial indexes on pending decisions and on approval_id where set
//	approvals(seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
//	                     UNIQUE(approval_id), UNIQUE(decision_id): a decision is answered once
//	approval_uses(seq, approval_id, used_by, used_ns) UNIQUE(approval_id)
//	events(seq, tbl, row_seq, payload, prev_hash, hash)
//	                     approvals' and uses' entries only
//
// A decision's body is its JSON (the audit type), stored once, in its
// commit's decision_bodies row. Walking the decisions in chain order, a
// decision is in order when its decision_id is greater than every
// in-order id before it (the first one is). A decision is special when
// its id is out of order, or it has an idempotency key, or its outcome is
// REQUIRE_CONFIRMATION (the pending inbox), or it presented an approval:
// only a special decision has a decisions row, holding the columns
// lookups and filters need, derived from the body, and its own chain
// entry (event, its number in the chain, and hash). Any other is found by
// its id through the one decision_bodies row whose first_id…last_id holds
// it (in-order ids grow along the chain, so the rows' ranges are disjoint)
// and the body in it that names it; its hash is computed from its body.
// Lookups by key, the pending inbox and listings by approval read the
// rows; other listings walk the bodies in recording order.
//
// An approval keeps its body in its row, and an approval or use is
// recorded by an events row. Decisions and events share one numbering
// (1, 2, 3, …) and one chain: every entry's hash is sha256(hash of the
// entry before ‖ payload), the payload being the canonical JSON of the
// row it records (its body by sha256; package auditchain), the same chain
// the PostgreSQL log writes. An events row stores its payload and
// prev_hash; a decision's payload is rebuilt from its body (and checked
// against its row's columns and stored hash when it has one), so
// [Log.Verify] finds any edited, deleted or inserted row or body, any
// first_id or last_id that is not the in-order ids of its row, and a
// decisions row no special decision accounts for; triggers refuse UPDATE
// and DELETE on every table, and Verify also checks that they are all in
// place. A single-use approval is used by the MAY_ACT decision it lifted,
// written in the same transaction (RecordUse): of concurrent
// presentations, in any process, exactly one is recorded (the write
// transaction is IMMEDIATE; approval_uses is UNIQUE on approval_id). An idempotency key is unique per
// caller credential.
//
// The hot path (Record) writes, per commit, one decision_bodies row (its
// B-tree grows at its end), and a decisions row (and its index entries)
// only for the commit's special decisions: a MAY_ACT or DENY decision
// without key or approval costs no row. The writer sorts each run of
// decisions by decision_id before numbering them (the order inside a run
// is its to choose); the ids are time-ordered UUIDs, so nearly every one
// is then in order. An in-order id cannot be taken already (it is greater
// than every id recorded in order, and every out-of-order id is smaller
// than some earlier in-order one), so only an out-of-order id is looked
// up, and a taken one is refused alone; the greatest in-order id is kept
// with the head. Listings follow recording order, so a reader continuing
// After the last decision it saw never skips one recorded late, and never
// sort; filters by time, proposition or outcome scan, as an operator's
// queries. The writer reads the chain head once per batch at most: it
// keeps the head it committed while PRAGMA data_version shows that no
// other connection wrote since.
//
// # Other schema versions
//
// A file whose schema_version is not [SchemaVersion] is refused by every
// open, with [ErrSchemaVersion] naming both versions. Versions 1 and 2
// were development formats no release wrote, so nothing converts them.
//
// # Durability and group commit
//
// Record returns only after its decision is committed, because the server
// sends a decision_id only after it is on record. One writer goroutine
// owns the write connection; writes queue on a channel and whatever
// queued during a commit shares the next transaction. A refused write (a
// duplicate idempotency key, a used approval) changes nothing, so the
// others in its batch still commit. Under 64 concurrent calls over HTTP
// a commit carries about 8 decisions (the writer commits as soon as its
// queue is empty), under 64 callers that only record, 30 to 35.
//
// A commit that small costs mostly pages, not rows: it rewrites the last,
// partly filled page of every table and index it appends to, and the
// file's first page, to the WAL. A new log therefore has 4 KiB pages
// (the ledger, whose bodies are larger, keeps 16 KiB): at 6 decisions a
// commit that is 6.7 KB written per decision instead of 15.8. And the
// writer checkpoints only after 256 MiB of WAL (SQLite's default is
// 1,000 pages): a checkpoint fsyncs the WAL and the file inside the
// commit that triggers it, while every caller queued behind that commit
// waits. The WAL file keeps the size it reached, so a busy log has a
// -wal file of up to 256 MiB beside it, and a restart after a crash reads
// it back. audit/README.md has the measurements.
//
// The file is in WAL mode with synchronous=NORMAL: a commit has written
// its WAL frames through the operating system before Record returns, so
// it survives the server process being killed at any instant (kill -9,
// an OOM kill, a crash); it may not survive the machine losing power
// before the next checkpoint, which FULL would guarantee at the price of
// an fsync per commit. Losing power loses the answers in flight too; a
// process crash must not lose an answer a client already has. Set
// Options.SyncFull where power loss matters more than throughput.
package sqlite
