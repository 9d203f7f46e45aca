package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/gateway/front"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/warrant"
)

// CodeToolDenied: the operator's manifest denies the call outright.
const CodeToolDenied = "EWP_REFUSE_DENIED_BY_MANIFEST" // as the hooks name it

// manifestOf is the operator's manifest as the front asks it.
type manifestOf struct{ m *manifest.Manifest }

func (m manifestOf) Permits(name string) bool { return m.m.Permits(name) }

// Request describes the call; a call the manifest denies outright (a deny
// rule, or no rule under "default": "deny") is an error, which the front
// records as a refusal without asking the gate.
func (m manifestOf) Request(name string, args json.RawMessage, p audit.Principal) (gate.Request, error) {
	c, err := m.m.Describe(name, args)
	var me *manifest.Error
	if errors.As(err, &me) {
		return gate.Request{}, me.Warrant()
	}
	if err != nil {
		return gate.Request{}, err
	}
	if c.Deny {
		why := fmt.Sprintf("the manifest's rule %q denies %s", c.Rule, name)
		if c.Rule == manifest.DefaultRule {
			why = "no rule of the manifest matches " + name + ", and its default is deny"
		}
		return gate.Request{}, &warrant.Error{Code: CodeToolDenied, Field: "/params/name", Rule: why}
	}
	return c.Request(p, front.Entrance), nil
}
