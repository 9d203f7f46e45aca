// Package budget is the gate's budget layer: per agent or group, how many
// calls a minute, how many high-risk and how many irreversible actions a
// day. A call past one is DENY with a reason naming the budget, the count
// and who used it ("budget.calls_per_minute: 60 of 60 used by agent bot in
// the minute from 2026-12-07T14:05:00Z").
//
// The budgets file (ewp-mcp --budgets FILE; schemas/budgets.schema.json):
//
//	{
//	  "agents":  {"bot":     {"calls_per_minute": 60, "irreversible_per_day": 5}},
//	  "groups":  {"interns": {"high_risk_per_day": 20}},
//	  "default": {"calls_per_minute": 120}
//	}
//
// "agents" budgets one agent; "groups" budgets the members of a group
// together (one count shared by all of them); "default" budgets every
// agent that has no entry under "agents", each on its own count (the
// anonymous caller is the agent "anonymous"). An agent is held to its own
// (or the default) budget and to every budget of its groups. A limit left
// out is no limit; 0 allows none.
//
// Counting. Each budget that applies adds one to its count through
// audit.Counters (atomic across processes, durable: the counts survive a
// restart and replicas on one PostgreSQL share them), under the key
// "agent:NAME:calls:minute", "group:G:high_risk:day",
// "agent:NAME:irreversible:day", in the window the call falls in (the
// minute, or the UTC day, it starts, truncated). The call is refused when
// a count goes past its limit, so under concurrency exactly the limit's
// number of calls pass. Measures are counted in that order (calls per
// minute, high risk per day, irreversible per day) and the first one
// exceeded stops the count: a call refused for its rate does not use up
// the day's high-risk allowance.
//
// What counts is every call that reached the layer: the gate runs its
// layers side by side and combines them afterwards, so when the budget
// counts a call it does not know whether another layer refuses it, and
// Counters only adds (a count is never taken back). A refused call
// therefore counts, as does one the budget itself refuses; a call whose
// earlier layer failed with an error never reaches the budget and does
// not. This is also the useful reading for a rate limit: an agent looping
// on refused calls is what calls_per_minute should stop. A call that
// needed a confirmation and its approved retry are two calls; a retry the
// gate answers from the record (its idempotency key) is not judged again
// and not counted.
//
// Work: a call adds at most 3 × (1 + its groups) counts, one database
// write each; a principal with more than audit.MaxAgentGroups groups is
// refused (fail closed) before anything is counted.
//
// The layer judges every request the gate decides, may_act too (with the
// action it declares); without a budgets file there is no layer, and an
// agent no budget names is not judged (the layer is left out of the
// answer).
package budget
