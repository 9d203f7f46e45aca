// Package mcp serves the Epistemic Warrant Protocol over MCP (EWP.md §11).
//
// New builds a Server over a Store (the ledger, seen through the small
// interface in store.go). ServeStdio serves it on newline-delimited
// JSON-RPC; HTTPHandler serves it as a Streamable HTTP endpoint at /mcp.
//
// The tools: list_propositions, warrant_now, evidence_view_get,
// memory_context and may_act read; evidence_view_put, evidence_record and
// check_record write and need the ingest role, which only the transport
// grants (--allow-ingest on stdio, the ingest token on HTTP). may_act is a
// composed gate: the warrant layer is built in and further layers (the
// grounding guard) are added with WithGateLayer.
//
// mcp-go does the protocol work (negotiation of every revision it knows,
// sessions, dispatch). A thin pre-filter in front of it (jsonrpc.go) makes
// malformed JSON-RPC get the error codes JSON-RPC and EWP ask for, where
// mcp-go answers differently or not at all.
package mcp
