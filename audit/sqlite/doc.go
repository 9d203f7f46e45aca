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
// DefaultPath(X) = X + ".audit" (ewp.db → ewp.db.audit), unless --audit
// names another file. ewp-mcp creates it at start-up ([OpenOrCreate]);
// ewp-audit only opens it ([Open]), so a mistyped path is an error, not a
// new, empty log.
//
// # Schema (version 2)
//
//	audit_meta(key, value)                            schema_version = 2
//	decision_bodies(first_event, first_seq, n, head, bodies)
//	                     the bodies of n decisions one commit recorded, ≤ 256 KiB a row (events
//	                     first_event…, rows first_seq…), each followed by '\n';
//	                     head is the hash of the last one's event
//	decisions(seq, event, decision_id, time_ns, outcome, proposition_id,
//	          credential, idem_key, approval_id, hash)   seq the rowid: recording order;
//	                     UNIQUE(decision_id); UNIQUE(credential, idem_key) where keyed;
//	                     partial indexes on pending decisions and on approval_id where set
//	approvals(seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
//	                     UNIQUE(approval_id), UNIQUE(decision_id): a decision is answered once
//	approval_uses(seq, approval_id, used_by, used_ns) UNIQUE(approval_id)
//	events(seq, tbl, row_seq, payload, prev_hash, hash)
//	                     approvals' and uses' entries only
//
// A decision's body is its JSON (the audit type), stored once, in its
// commit's decision_bodies row; its decisions row holds the columns
// lookups and filters need, derived from the body, and its own chain
// entry: event, its number in the chain, and hash. An approval keeps its
// body in its row, and an approval or use is recorded by an events row.
// Decisions and events share one numbering (1, 2, 3, …) and one chain:
// every entry's hash is sha256(hash of the entry before ‖ payload), the
// payload being the canonical JSON of the row it records (its body by
// sha256; package auditchain). An events row stores its payload and
// prev_hash; a decision's payload is rebuilt from its body and columns,
// so [Log.Verify] finds any edited, deleted or inserted row or body;
// triggers refuse UPDATE and DELETE on every table, and Verify also
// checks that they are all in place. A single-use approval is consumed
// by an INSERT into approval_uses: its UNIQUE constraint lets exactly
// one of concurrent consumers, in any process, succeed. An idempotency
// key is unique per caller credential.
//
// The hot path (Record) writes three B-trees, each at its end: one
// decision_bodies row per commit, the decisions rows (their rowids
// assigned in order, as the chain numbers them) and decision_id's index
// (time-ordered UUIDs), in multi-row INSERT OR IGNORE statements (which
// need no statement journal; a row skipped for a taken id is found by the
// count and its batch is run again checking each id). Listings follow
// recording order, so a reader continuing After the last decision it saw
// never skips one recorded late, and never sort; filters by time,
// proposition or outcome scan, as an operator's queries. The writer reads the chain head once per batch at most: it
// keeps the head it committed while PRAGMA data_version shows that no
// other connection wrote since.
//
// # Upgrading a version 1 log
//
// Version 1 kept a wide decisions row per decision (body and body_sha256
// included) and an events row for it, payload and hashes as above: the
// chain is the same in both versions, entry for entry. [Upgrade] converts
// a version 1 file in place, in one IMMEDIATE transaction, so a failure or
// a crash part-way leaves the version 1 log: it verifies the whole version
// 1 chain first and refuses a broken log, naming the break (converting it
// would carry an edit into a chain that no longer shows it); it then sets
// the old tables aside, creates this version's schema exactly as a new
// log's, writes each decision as a narrow row with its event's number and
// hash and the bodies of each run of consecutive decisions (at most 256)
// as a decision_bodies row, keeps the approvals, the uses and their
// events, drops the old tables, and verifies the result against the head
// it started from before committing. The head is the same before and
// after, so a head kept from `ewp-audit verify` still holds. A current log
// is left alone. [Open] and [OpenOrCreate] without ReadOnly (ewp-mcp at
// start-up, ewp-audit approve) upgrade a version 1 file first; a ReadOnly
// Open refuses it with [ErrSchemaVersion], naming `ewp-audit upgrade`.
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
