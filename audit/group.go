package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PendingGroup is the pending decisions of one identical gate input from
// one caller: an agent retrying a call that awaits confirmation adds a
// decision to its group, not another item for the operator to answer.
type PendingGroup struct {
	// Newest is the group's latest decision: the call the inbox offers,
	// and the one an answer to the group answers.
	Newest Decision
	// IDs are the group's decision ids in the log's order (Newest's last).
	IDs []string
	// First is the time of the group's first decision.
	First time.Time
}

// Count is how many times the call was asked.
func (g PendingGroup) Count() int { return len(g.IDs) }

// Has reports whether decision id is in the group.
func (g PendingGroup) Has(id string) bool {
	for _, x := range g.IDs {
		if x == id {
			return true
		}
	}
	return false
}

// GroupPending groups pending decisions, given in the log's order, by
// caller and gate input: the same tool, the same caller (transport, role,
// credential and client name; not its address, which changes with every
// connection) and the same proposition and action (Action.Differs finds
// nothing). Groups come in the order of their first decision.
func GroupPending(ds []Decision) []PendingGroup {
	var out []PendingGroup
	at := map[string]int{}
	var k keyer
	for _, d := range ds {
		key := k.key(&d)
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, PendingGroup{First: d.Time})
		}
		out[i].Newest = d
		out[i].IDs = append(out[i].IDs, d.ID)
	}
	return out
}

// keyer writes what two decisions of one group share as one string: the
// tool, the caller's identity (its agent included) and the action in the form Differs
// compares, each field length-prefixed so no value can pass for two.
// It remembers the canonical form of the risk policies it has seen:
// nearly every decision carries the same one.
type keyer struct {
	b        strings.Builder
	policies map[string]string
}

func (k *keyer) key(d *Decision) string {
	a, c := d.Action().jsonForm(), d.Caller
	k.b.Reset()
	// The agent too: an approval answers one agent's call, so identical
	// calls of two agents are two items, and answering one never closes
	// the other's as superseded.
	for _, f := range []string{d.Tool, c.Transport, c.Role, c.Credential, c.ClientName, AsJSON(d.Agent),
		a.PropositionID, a.ActionID, a.ActionKind, a.Risk, boolText(a.Reversible), a.Cardinality, intText(a.MinDepth),
		a.ToolName, a.ArgumentsHash, k.policy(a.RiskPolicy)} {
		k.field(f)
	}
	for _, concept := range foldSet(a.Concepts) {
		k.field(concept)
	}
	return k.b.String()
}

func (k *keyer) field(s string) {
	k.b.WriteString(strconv.Itoa(len(s)))
	k.b.WriteByte(':')
	k.b.WriteString(s)
}

func (k *keyer) policy(p any) string {
	if p == nil {
		return ""
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return canonicalJSON(p)
	}
	if c, ok := k.policies[string(raw)]; ok {
		return c
	}
	if k.policies == nil {
		k.policies = map[string]string{}
	}
	c := canonicalJSON(p)
	k.policies[string(raw)] = c
	return c
}

// MaxPendingRead bounds the pending decisions PendingGroups reads (the
// oldest first), so a flood of calls cannot make the inbox slow: 2,000
// are listed and grouped in about 50 ms. Answering them brings the next.
const MaxPendingRead = 2000

// PendingGroups reads the log's pending decisions (at most
// MaxPendingRead, oldest first) and groups them (GroupPending).
func PendingGroups(ctx context.Context, l Log) ([]PendingGroup, error) {
	const page = 500
	var all []Decision
	for after := ""; len(all) < MaxPendingRead; {
		ds, err := l.List(ctx, Filter{Pending: true, After: after, Limit: page})
		if err != nil {
			return nil, err
		}
		all = append(all, ds...)
		if len(ds) < page {
			break
		}
		after = ds[len(ds)-1].ID
	}
	return GroupPending(all), nil
}

// Superseded is the rejection that closes decision id, an older identical
// retry in the group of the decision that answer answered: a group is
// answered once, through its newest decision, and the others leave the
// inbox with a note naming that answer. Nothing is lost by it: an agent
// presents an approval, not a decision, and the answer covers the same
// gate input.
func Superseded(id string, answer *Approval) *Approval {
	return &Approval{DecisionID: id, Verdict: Rejected, Approver: answer.Approver,
		Note: fmt.Sprintf("superseded: an identical later call, decision %s, was %s by %s (%s)", answer.DecisionID, answer.Verdict, answer.Approver, answer.ID)}
}

// SignFunc signs an answer before it is stored, given the decision it
// answers (Signer.Sign at the operator's clock). The group operations
// store answers the operator did not write one by one, and every answer
// on record is signed by the operator on whose behalf it was made.
type SignFunc func(a *Approval, answered *Decision) error

// approveSigned looks up the decision a answers, signs a and stores it.
func approveSigned(ctx context.Context, l Log, a *Approval, sign SignFunc) error {
	d, err := l.Decision(ctx, a.DecisionID)
	if err != nil {
		return err
	}
	if err := sign(a, d); err != nil {
		return err
	}
	return l.Approve(ctx, a)
}

// AnswerGroup stores answer (an approval or rejection of one decision of
// group g, normally g.Newest, signed by the caller) and then closes the
// group's other pending decisions as Superseded, each signed with sign.
// It returns how many it closed; one answered meanwhile (ErrAnswered,
// ErrNotPending) is left as it is.
func AnswerGroup(ctx context.Context, l Log, g PendingGroup, answer *Approval, sign SignFunc) (closed int, err error) {
	if !g.Has(answer.DecisionID) {
		return 0, fmt.Errorf("%w: decision %s is not in the group it answers", ErrInvalidApproval, answer.DecisionID)
	}
	if err := l.Approve(ctx, answer); err != nil {
		return 0, err
	}
	for _, id := range g.IDs {
		if id == answer.DecisionID {
			continue
		}
		err := approveSigned(ctx, l, Superseded(id, answer), sign)
		if errors.Is(err, ErrAnswered) || errors.Is(err, ErrNotPending) {
			continue
		}
		if err != nil {
			return closed, fmt.Errorf("closing decision %s as superseded by %s: %w", id, answer.ID, err)
		}
		closed++
	}
	return closed, nil
}

// Answer stores answer (signed by the caller) and closes the identical
// older calls pending in its decision's group (AnswerGroup); a decision
// in no group (not pending) is answered alone, and the store says why it
// cannot be.
func Answer(ctx context.Context, l Log, answer *Approval, sign SignFunc) (closed int, err error) {
	g, ok, err := GroupOf(ctx, l, answer.DecisionID)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, l.Approve(ctx, answer)
	}
	return AnswerGroup(ctx, l, g, answer, sign)
}

// GroupOf finds the pending group that holds decision id; ok is false
// when id is not pending. A decision no group holds is answered alone.
func GroupOf(ctx context.Context, l Log, id string) (g PendingGroup, ok bool, err error) {
	groups, err := PendingGroups(ctx, l)
	if err != nil {
		return g, false, err
	}
	for _, g := range groups {
		if g.Has(id) {
			return g, true, nil
		}
	}
	return g, false, nil
}

// RejectStale rejects every pending group whose newest decision is
// before cutoff, all its decisions, with note in approver's name; the
// agent is told the note. Each rejection is signed with sign. It returns
// how many decisions it rejected.
func RejectStale(ctx context.Context, l Log, cutoff time.Time, approver, note string, sign SignFunc) (int, error) {
	switch {
	case strings.TrimSpace(approver) == "":
		return 0, fmt.Errorf("%w: approver is empty; name the person who decides", ErrInvalidApproval)
	case strings.TrimSpace(note) == "":
		return 0, fmt.Errorf("%w: a rejection needs a note saying why (it is what the agent is told)", ErrInvalidApproval)
	}
	groups, err := PendingGroups(ctx, l)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range groups {
		if !g.Newest.Time.Before(cutoff) {
			continue
		}
		for _, id := range g.IDs {
			err := approveSigned(ctx, l, &Approval{DecisionID: id, Verdict: Rejected, Approver: approver, Note: note}, sign)
			if errors.Is(err, ErrAnswered) || errors.Is(err, ErrNotPending) {
				continue
			}
			if err != nil {
				return n, fmt.Errorf("rejecting decision %s: %w", id, err)
			}
			n++
		}
	}
	return n, nil
}
