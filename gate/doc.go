// Package gate is the action gate every entrance asks (the MCP tools, a
// gateway, client hooks): take a call — who asks, which action, on which
// evidence, under which policies — decide, record, and answer with a
// decision_id.
//
// Build a gate with New over a Ledger (the evidence), an audit.Log (the
// decision log; nil records nothing) and the layers past the warrant
// layer. Decide judges a Request: the warrant layer over the latest
// snapshot of each proposition it relies on, the evidence layer for a
// forwarded tool call (Request.Call), the configured layers, then the
// approval layer for an approval the call presents or, for a held tool
// call, the operator's once-approval of that very call. The decision is
// recorded before Decide returns, a refusal too; Refuse records a refusal
// an entrance met while decoding, Ground serves check_grounding, and
// RecordResult records what a forwarded call did.
//
// The package imports no MCP package (imports_test.go).
package gate
