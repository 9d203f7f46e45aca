package main

const usage = `ewp-ingest — load evidence into an EWP ledger

USAGE
  ewp-ingest --db PATH [flags] FILE...     load files (- reads standard input)
  ewp-ingest verify --db PATH [--json]     check the ledger's hash chain

Each view is validated exactly as warrant_now validates it, then stored as an
immutable snapshot (proposition_id, view_id). A file is stored whole or not at
all, unless you ask for --partial. Re-loading the same file is a no-op.

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

FLAGS
  --db PATH                   the ledger file; created if it does not exist
  --attest-trusted-origins    vouch for records whose source.origin_type is
                              trusted (tool, document, human, api, vendor,
                              sensor); without it such views are refused
                              (EWP_REFUSE_UNATTESTED_TRUSTED_ORIGIN)
  --partial                   store the valid views of a file and report the
                              refused ones (default: refuse the whole file)
  --evaluated-at INSTANT      the time the closing warrant report is computed
                              at (default: now); it is never stored
  --axes N                    report the warrant of at most N touched
                              propositions (default 20; 0 for none)
  --quiet                     print only refusals and errors
  --json                      print one machine-readable JSON report on stdout
  -h, --help                  show this help

EXAMPLES
  # Load the quickstart evidence; its checks come from a tool, so attest them.
  ewp-ingest --db ewp.db --attest-trusted-origins fixtures/examples/quickstart.json

  # Stream JSON Lines from a pipeline and keep whatever is valid.
  produce-views | ewp-ingest --db ewp.db --partial -

  # Report the warrants as of a fixed instant, for a reproducible log.
  ewp-ingest --db ewp.db --evaluated-at 2026-09-21T12:00:00Z views.jsonl

  # Machine-readable outcome for CI.
  ewp-ingest --db ewp.db --json --quiet views.json | jq .refused

  # Check that nobody edited the file.
  ewp-ingest verify --db ewp.db

ERRORS
  Refusals go to stderr, one per line, naming the file, the line (JSON Lines)
  or index (lists), the field path and the rule, e.g.
    views.jsonl: line 3: EWP_REFUSE_INVALID_EVIDENCE_VIEW: evidence[0].polarity: ...
  A graph document is refused with EWP_REFUSE_INVALID_GRAPH, naming the
  primitive, the depth and the rule, e.g.
    g.json: EWP_REFUSE_INVALID_GRAPH: primitives[3].depths[2].relata[0]:
      primitive "file" D2 CAPABILITIES: ... (transitive_cycle)
  Changing a stored snapshot or record is refused with
  EWP_REFUSE_IMMUTABLE_RECORD: store new evidence under a new view_id and
  give changed records new ids.

EXIT CODES
  0  every view was stored or was already present
  1  --partial: some views were refused, the others were stored
  2  usage error (bad flag, missing --db, unreadable input); nothing written
  3  a file was refused; nothing of that file was written (other files in the
     same run that were accepted stay stored)
  4  the ledger could not be opened, read or written
  5  verify: the ledger is broken (the first broken event is named)
  6  internal error
`
