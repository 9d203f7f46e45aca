// Package edgepolicy loads operator edge policies written in Cedar, checks
// that each one is placed on a real APPLIES_TO edge of the concept graph, and
// evaluates them against the edges of a grounded trace.
//
// A policy file is plain Cedar. Each policy is placed on exactly one
// APPLIES_TO edge by annotations:
//
//	@id("protected_file")
//	@source("delete") @target("file") @source_depth("3")
//	@confirm("Deleting protected files needs a human.")  // omit for a hard block
//	@cardinality("multiple")                              // optional filter
//	forbid (principal, action, resource)
//	when { context.arguments.path like "protected*" };
//
// Only forbid policies are accepted. The policy layer can only restrict an
// action, never grant one, so a permit would either be dead text or suggest
// to its author a power it does not have; Load refuses it instead.
//
// The principal is Agent::"NAME" (Request.AgentID, "anonymous" when empty)
// with the agent's groups as parents Group::"G" (Request.AgentGroups), so
// `principal in Group::"ops"` restricts the members of ops only. The
// action is Action::"TOOL_NAME", the resource Concept::"TARGET".
//
// Evaluation is fail closed: a policy whose condition cannot be evaluated
// (an attribute it reads is missing, a type error, no tool name, an argument
// that cannot be turned into a Cedar value) fires as if it had matched.
//
// The package is deliberately independent of the grounding engine: it takes
// plain edges and a small Graph interface, so the two can evolve apart.
package edgepolicy
