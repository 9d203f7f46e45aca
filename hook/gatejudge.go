package hook

import (
	"context"
	"errors"
	"net/http"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/warrant"
)

// Describe turns a query into the gate's request: the manifest's
// description of the call (ManifestDescribe), or a test's. An error
// refuses the call, and is recorded with the request returned beside it
// (its Call, when the call was described and then denied).
type Describe func(q Query) (gate.Request, error)

// CodeDeniedByManifest is the refusal of a call the manifest denies (a
// deny rule, or no rule under "default": "deny"): never asked about.
const CodeDeniedByManifest = "EWP_REFUSE_DENIED_BY_MANIFEST"

// ManifestDescribe describes calls by m: relative paths resolve against
// the query's Root (Claude Code's cwd) when it gives one.
func ManifestDescribe(m *manifest.Manifest) Describe {
	return func(q Query) (gate.Request, error) {
		c, err := m.DescribeIn(q.Tool, q.Arguments, q.Root)
		if err != nil {
			var me *manifest.Error
			if errors.As(err, &me) {
				err = me.Warrant()
			}
			return gate.Request{}, err
		}
		r := c.Request(q.Caller.Principal, q.Entrance)
		if c.Deny {
			why := "the manifest denies this tool"
			if c.Rule == manifest.DefaultRule {
				why = "no manifest rule matches this tool, and the manifest's default is deny"
			}
			return r, &warrant.Error{Code: CodeDeniedByManifest, Field: "tool_name", Rule: why + " (" + c.Name + ", rule " + c.Rule + ")"}
		}
		return r, nil
	}
}

// GateJudge is the Judge over a gate: Describe says what the call is, the
// gate decides and records it, Log finds it again for its result.
type GateJudge struct {
	Gate     *gate.Gate
	Describe Describe
	// Log is the gate's decision log; nil: no results are recorded (the
	// gate records nothing either).
	Log audit.Log
}

// Judge asks the gate. A refusal the gate recorded (or a description
// the manifest refused, recorded here) is a DENY under its decision_id.
func (j *GateJudge) Judge(ctx context.Context, q Query) (Verdict, error) {
	caller := audit.Caller{ClientName: q.Client, Transport: q.Caller.Transport, RemoteAddr: q.Caller.RemoteAddr,
		Role: "evaluate", Credential: q.Caller.Credential}
	if caller.ClientName == "" {
		caller.ClientName = q.Entrance
	}
	r, err := j.Describe(q)
	r.Agent, r.Caller = q.Caller.Principal, caller
	if j.Log != nil {
		// The key is the hook's, to find the decision again for its
		// result; a gate without a log refuses any key, and has no
		// result to record.
		r.IdempotencyKey = q.IdempotencyKey
	}
	if err != nil {
		return refused(j.Gate.Refuse(ctx, audit.ToolCall, r, err))
	}
	ans, err := j.Gate.Decide(ctx, r)
	if err != nil {
		return refused(err)
	}
	v := Verdict{Decision: audit.Verdict(ans.Decision), DecisionID: ans.DecisionID}
	if r.Call != nil {
		v.ConfirmBy = r.Call.ConfirmBy
	}
	for _, l := range ans.Layers {
		if l.Decision == audit.VerdictMayAct || l.Decision == audit.VerdictSkipped {
			continue
		}
		for _, why := range l.Reasons {
			v.Reasons = append(v.Reasons, l.Layer+": "+why)
		}
	}
	return v, nil
}

// refused is the verdict of a refusal: a DENY naming its record when the
// gate recorded it; an unrecorded failure stays an error (the hook fails
// closed without an answer).
func refused(err error) (Verdict, error) {
	var rec *gate.RecordedError
	if !errors.As(err, &rec) {
		return Verdict{}, err
	}
	_, msg := gate.Explain(rec.Err)
	return Verdict{Decision: audit.VerdictDeny, DecisionID: rec.ID, Reasons: []string{"refused: " + msg}}, nil
}

// Recorded finds the decision the gate recorded for c under key.
func (j *GateJudge) Recorded(ctx context.Context, c Caller, key string) (string, error) {
	if j.Log == nil {
		return "", nil
	}
	d, err := j.Log.ByIdempotencyKey(ctx, c.Credential, key)
	if err != nil {
		return "", err
	}
	if d.Agent != c.Principal.Name {
		return "", audit.ErrNotFound
	}
	return d.ID, nil
}

// RecordResult records res for a decision of c's agent.
func (j *GateJudge) RecordResult(ctx context.Context, c Caller, res audit.Result) error {
	if j.Log == nil || res.DecisionID == "" {
		return nil
	}
	d, err := j.Log.Decision(ctx, res.DecisionID)
	if err != nil {
		return err
	}
	if d.Agent != c.Principal.Name {
		return audit.ErrNotFound // another agent's decision is not this one's to report on
	}
	return j.Gate.RecordResult(ctx, res)
}

// IdentityAuth authenticates hook requests with a, answering a refused
// credential with its 401 challenge.
func IdentityAuth(a *identity.Authenticator) Authenticate {
	return func(w http.ResponseWriter, r *http.Request) (Caller, bool) {
		id, err := a.Authenticate(r)
		if err != nil {
			a.Challenge(w, err)
			return Caller{}, false
		}
		return Caller{Principal: id.Principal, Credential: id.Record()}, true
	}
}
