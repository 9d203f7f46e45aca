// Package ingest is the logic of ewp-ingest (EWP §12): it splits an input
// into views without decoding them ([Split]), validates each view exactly
// as warrant_now does ([DecodeItem]), stores a file as one all-or-nothing
// ledger batch (or, with Options.Partial, stores the valid views and
// reports the rest) and builds a [Report] with each touched proposition's
// warrant at a reporting time. Refusals name the file, the line (JSON
// Lines) or index (lists), the field path and the rule.
//
// Accepted inputs: one EvidenceView (or a fixture-format document, a view
// plus evaluated_at and optional policy_id/policy_version, whose T must
// then be parseable), a JSON list of views, an envelope {"views": [...]}
// with any other keys ignored, or JSON Lines. A concept-graph document
// {"graph": ..., "primitives": [...]} is routed to Options.Graph.
package ingest
