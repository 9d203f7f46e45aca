package main

const usage = `ewp-ingest — load evidence into an EWP ledger

USAGE
  ewp-ingest --db PATH [flags] FILE...     load files (- reads standard input)
  ewp-ingest verify --db PATH [--json]     check the ledger's hash chain (verify --help)
  ewp-ingest init --db PATH|postgres://…   create an empty ledger file, or a PostgreSQL
                                           ledger's schema and roles
  ewp-ingest copy --from A --to B          copy a ledger (file or URL) into another

PATH may be an SQLite file or a PostgreSQL URL (postgres://USER@HOST/DB or
postgresql://…). On PostgreSQL, run init once as the database's owner (with
CREATEROLE): it creates the ledger tables (append-only, enforced by
triggers), the decision log's schema ewp_audit and the roles ewp_reader,
ewp_writer, ewp_server (replicas: decisions, never approvals) and
ewp_operator (ewp-audit approve), and prints what it made and what was already
there; running it again changes nothing. Load as a login in ewp_writer.
Any number of ewp-ingest processes may load into one database at once: they
take turns on the one hash chain. URL settings: pool_max_conns=N,
connect_timeout=SECONDS (default 5), statement_timeout=MS (default 30000).
copy stores every event of A again in B in chain order, so B ends with A's
chain head (printed); an interrupted copy resumes where it stopped.

Each view is validated exactly as warrant_now validates it, then stored as an
immutable snapshot (proposition_id, view_id). Re-loading the same input is a
no-op. Inputs are read as they arrive, in memory that does not grow with them
(200–250 MB at peak for any file; GOMEMLIMIT replaces the 192 MiB soft limit
on the Go heap).

FILES AND STREAMS
  A named regular file is one transaction: stored whole or not at all (every
  refused view is reported), unless you ask for --partial. Readers see none
  of it until all of it is stored.
  Standard input (-) from a pipe or terminal, or a named FIFO or device, is
  a stream (- redirected from a regular file is a file): views are committed in
  batches as they arrive (every 10,000 views or 200 ms, whichever comes
  first), so a reader sees each view well within a second of its line. The
  first refused view stops a stream: the views before it stay stored,
  nothing after it is read (exit 3). With --partial a stream goes on past
  refused views. A restarted pipeline may re-send what it sent: identical
  snapshots are no-ops.

INPUT (detected from the content, not the file name)
  one EvidenceView            {"proposition_id": "P-1", "assertions": [...], ...}
  a list of views             [{...}, {...}]
  an envelope                 {"views": [{...}, {...}], "note": "ignored"}
  JSON Lines                  one view per line, for pipelines
  A view may carry "evaluated_at" (fixture format); it must then be a
  parseable instant. A view without "view_id" gets one derived from its content.
  a concept graph             {"graph": "fs", "primitives": [{"name": ...,
                              "depths": [...]}]}: the grounding guard's graph
                              (MCP_CONTRACT.md, "The guard"). Validated whole against
                              the stored graph (relation types, levels 0-4,
                              relata to known names, unique folded names, no
                              transitive cycle) and stored whole or not at all;
                              re-loading an unchanged document is a no-op.
  Lists and envelopes are read element by element. Text must be UTF-8 JSON
  without a byte-order mark (warrant_now refuses one too: remove it).

FLAGS
  --db PATH|URL               the ledger file, created if it does not exist
                              (and kept only when something was stored in it:
                              ewp-ingest init --db PATH makes an empty one), or
                              a postgres:// URL (created if empty, as init)
  --strict                    refuse a view with a key the published schema
                              (schemas/) does not name, or with no records, as
                              any refused view (see FILES AND STREAMS); without
                              it such a view is stored with a warning
  --attest-trusted-origins    vouch for records whose source.origin_type is
                              trusted (tool, document, human, api, vendor,
                              sensor); without it such views are refused
                              (EWP_REFUSE_UNATTESTED_TRUSTED_ORIGIN)
  --partial                   store the valid views and report the refused ones
                              (default: refuse the whole file, stop a stream);
                              a JSON Lines line that is not JSON is refused and
                              reading goes on at the next line starting with {
  --evaluated-at INSTANT      the time the closing warrant report is computed
                              at (default: now); it is never stored
  --axes N                    report the warrant of at most N touched
                              propositions (default 20; 0 for none)
  --max-view-bytes N          refuse a view whose JSON text is over N bytes
                              (default 4194304)
  --max-records N             refuse a view with more than N records (assertions,
                              evidence, checks, conflicts, lineage edges;
                              default 20000)
  --max-subjects N            refuse a subjects list longer than N (default 10000)
  --max-string-bytes N        refuse a string over N bytes (default 65536)
                              (over a limit: EWP_REFUSE_LIMIT_EXCEEDED)
  --quiet                     print only refusals and errors
  --json                      print one machine-readable JSON report on stdout
  -h, --help                  show this help

EXAMPLES
  # Load the quickstart evidence; its checks come from a tool, so attest them.
  ewp-ingest --db ewp.sqlite --attest-trusted-origins fixtures/examples/quickstart.json

  # Stream JSON Lines from a pipeline (committed as they come) and keep
  # whatever is valid.
  produce-views | ewp-ingest --db ewp.sqlite --partial -

  # Report the warrants as of a fixed instant, for a reproducible log.
  ewp-ingest --db ewp.sqlite --evaluated-at 2026-09-21T12:00:00Z views.jsonl

  # Machine-readable outcome for CI.
  ewp-ingest --db ewp.sqlite --json --quiet views.json | jq .refused

  # Check that nobody edited the file.
  ewp-ingest verify --db ewp.sqlite

REPORT
  Every run ends with the ledger's chain head, SEQ:HASH ("head" in --json):
    chain head 1234:9f86d081884c7d65...
  Keep it: ewp-ingest verify --db ewp.sqlite --head 1234:9f86... proves later that
  nothing was cut off the end of the ledger.

ERRORS
  Refusals go to stderr, one per line (a stream's as they happen), naming the
  file, the line (JSON Lines) or index (lists), the field path and the rule,
  e.g.
    views.jsonl: line 3: EWP_REFUSE_INVALID_EVIDENCE_VIEW: evidence[0].polarity: ...
  Text that is not JSON is located by line, column and byte offset, e.g.
    views.jsonl: line 2: EWP_REFUSE_INVALID_EVIDENCE_VIEW: not JSON: line 2,
      column 2 (byte offset 341): unexpected 'g'; expected a member name ...
  A graph document is refused with EWP_REFUSE_INVALID_GRAPH, naming the
  primitive, the depth and the rule, e.g.
    g.json: EWP_REFUSE_INVALID_GRAPH: primitives[3].depths[2].relata[0]:
      primitive "file" D2 CAPABILITIES: ... (transitive_cycle)
  Warnings go to stderr too, for views the protocol accepts but that are
  likely mistakes, with the line of the key, its JSON pointer and the
  nearest known key; they do not change the exit code (--strict refuses):
    v.json: line 2: warning: EWP_INGEST_UNKNOWN_KEY: /asertions: unknown
      key "asertions" (did you mean "assertions"?); ...
    v.json: line 1: warning: EWP_INGEST_EMPTY_VIEW: the view of "P-1" holds
      no assertions, evidence, checks, conflicts or lineage; ...
  Changing a stored snapshot or record is refused with
  EWP_REFUSE_IMMUTABLE_RECORD: store new evidence under a new view_id and
  give changed records new ids.

EXIT CODES
  0  every view was stored or was already present (warnings or not)
  1  --partial: some views were refused, the others were stored
  2  usage error (bad flag, missing --db, unreadable input); nothing written
  3  a file was refused (with --strict, for a warning too); nothing of that file was written (other files in the
     same run that were accepted stay stored); or a stream stopped at a
     refused view (the views before it stay stored)
  4  the ledger could not be opened, read or written
  5  verify: the ledger is broken (the first broken event is named)
  6  internal error
`
