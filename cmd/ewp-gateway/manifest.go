package main

import (
	"encoding/json"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/gateway/front"
	"github.com/ewp-go/ewp/manifest"
)

// manifestOf is the operator's manifest as the front asks it.
type manifestOf struct{ m *manifest.Manifest }

func (m manifestOf) Permits(name string) bool { return m.m.Permits(name) }

// Request describes the call; a call the manifest denies outright (a deny
// rule, or no rule under "default": "deny") is an error, which the front
// records as a refusal without asking the gate.
func (m manifestOf) Request(name string, args json.RawMessage, p audit.Principal) (gate.Request, error) {
	c, err := m.m.Describe(name, args)
	if err != nil {
		return gate.Request{}, err
	}
	if c.Deny {
		if c.Rule == manifest.DefaultRule {
			return gate.Request{}, fmt.Errorf("no rule of the manifest matches %s, and its default is deny", name)
		}
		return gate.Request{}, fmt.Errorf("the manifest's rule %q denies %s", c.Rule, name)
	}
	return c.Request(p, front.Entrance), nil
}
