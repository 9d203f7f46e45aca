// Package callpolicy is the gate's call_policies layer: the operator's
// Cedar policies over a tool call itself, as the gateway and the client
// hooks describe it (gate.Input.Call).
//
// Each policy is judged on the request
//
//	principal  Agent::"NAME", its groups as parents Group::"G"
//	action     Action::"call"
//	resource   Tool::"SERVER/TOOL", its server as parent Server::"SERVER"
//	context    { input: the call's arguments (a record), tool: "SERVER/TOOL",
//	             kind, risk, reversible (the manifest's description),
//	             entrance: "gateway" | "claude-code" | "openclaw" | "tool-call" }
//
// A policy file is plain Cedar with an @id on every policy:
//
//	@id("no_etc_writes")
//	forbid (principal, action, resource in Server::"filesystem")
//	when { context.input has path && context.input.path like "/etc/*" };
//
//	@id("interns_confirm_deletes")
//	@confirm("Interns' deletes need a human.")
//	forbid (principal in Group::"interns", action, resource)
//	when { context.kind == "delete" };
//
// A forbid that matches denies the call, with its id in the reason; one
// with @confirm("message") asks for a confirmation instead (the message is
// what the human is shown), as in the edge policies. Any hard match wins
// over a confirmation.
//
// Restrict-only, not default-deny. AWS AgentCore Gateway denies every
// call no permit allows. Here the allow-list is the operator's tool
// manifest (a call no rule matches is refused, and tools/list shows only
// tools a rule could permit), and every gate layer can only restrict, the
// decision being the most restrictive of them. So the file holds forbid
// policies only: a permit would either be dead text or promise a power the
// layer does not have, and Load refuses it. A call no policy forbids is
// MAY_ACT in this layer; the manifest and the other layers still judge it.
//
// Fail closed: a policy that cannot be evaluated (it reads an input member
// the call does not have, a type error) fires as if it had matched, its
// reason saying so. Write `context.input has path && …` for an optional
// argument. Arguments deeper than MaxInputDepth, with more than
// MaxInputValues values or longer than MaxInputBytes fire every policy
// the same way: they are never given to Cedar.
//
// Without a policy file there is no layer: the gate's answer has no
// call_policies entry. Requests with no Call (may_act through MCP) are not
// judged by it either.
package callpolicy
