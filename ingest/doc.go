// Package ingest is the logic of ewp-ingest (EWP §12): it splits an input
// into views as it reads it ([SplitReader]), validates each view exactly
// as warrant_now does ([DecodeItem]) on every core, and stores them in
// order through ledger.PutStream, in memory that does not grow with the
// input. A file is one all-or-nothing transaction (or, with
// Options.Partial, its valid views are stored and the rest reported); a
// stream (standard input, a pipe) is committed in small batches as views
// arrive, so readers see them at once. A [Report] gives each touched
// proposition's warrant at a reporting time and the ledger's chain head.
// Refusals name the file, the line (JSON Lines) or index (lists), the
// field path and the rule; text that is not JSON, by line, column and
// byte offset.
//
// Accepted inputs: one EvidenceView (or a fixture-format document, a view
// plus evaluated_at and optional policy_id/policy_version, whose T must
// then be parseable), a JSON list of views, an envelope {"views": [...]}
// with any other keys ignored, or JSON Lines. A concept-graph document
// {"graph": ..., "primitives": [...]} is routed to Options.Graph. A UTF-8
// byte-order mark is refused by name, as warrant_now refuses it: it is
// not part of JSON text, and quietly dropping bytes of an operator's input
// would hide how it was produced.
package ingest
