package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const example = `{
  "db": "ewp.sqlite",
  "policies": "policies/edges.cedar",
  "operator_keys": "/etc/ewp/operators.pub",
  "console_url": "http://127.0.0.1:8765/console/",
  "servers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
           "env": {"NODE_OPTIONS": "--no-warnings"}, "timeout": "10s", "restart": {"min": "1s", "max": "1m"}},
    "local": {"command": "./bin/tool"},
    "remote": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer x"}, "resources": true, "prompts": true}
  },
  "tools": [{"match": "fs/read_*", "kind": "read", "risk": "low", "reversible": true}],
  "default": "deny",
  "roots": {"fs": "/srv"},
  "redact": ["token"],
  "pin_on_first_sight": true
}`

func TestParseExampleResolvesPaths(t *testing.T) {
	c, err := Parse("/etc/gw/gateway.json", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"DB": c.DB, "Audit": c.Audit, "Policies": c.Policies, "OperatorKeys": c.OperatorKeys, "Pins": c.Pins,
	}
	for k, v := range map[string]string{
		"DB": "/etc/gw/ewp.sqlite", "Audit": "/etc/gw/ewp.sqlite.audit", "Policies": "/etc/gw/policies/edges.cedar",
		"OperatorKeys": "/etc/ewp/operators.pub", "Pins": "/etc/gw/gateway.pins.json",
	} {
		if want[k] != v {
			t.Errorf("%s = %q, want %q", k, want[k], v)
		}
	}
	if len(c.Servers) != 3 || c.Servers[0].Name != "fs" || c.Servers[1].Name != "local" || c.Servers[2].Name != "remote" {
		t.Fatalf("servers = %+v", c.Servers)
	}
	fs, local, remote := c.Servers[0], c.Servers[1], c.Servers[2]
	if fs.Command != "npx" || fs.Timeout != 10*time.Second || fs.Restart != (Backoff{time.Second, time.Minute}) || fs.Cwd != "/etc/gw" {
		t.Errorf("fs = %+v", fs)
	}
	if local.Command != "/etc/gw/bin/tool" || local.Timeout != DefaultTimeout || local.Restart != (Backoff{DefaultRestartMin, DefaultRestartMax}) {
		t.Errorf("local = %+v", local)
	}
	if remote.Stdio() || !remote.Resources || !remote.Prompts || remote.Headers["Authorization"] != "Bearer x" {
		t.Errorf("remote = %+v", remote)
	}
	if !c.PinOnFirstSight || string(c.Manifest) != `{"default":"deny","redact":["token"],"roots":{"fs":"/srv"},"tools":[{"match":"fs/read_*","kind":"read","risk":"low","reversible":true}]}` {
		t.Errorf("pin_on_first_sight %v, manifest %s", c.PinOnFirstSight, c.Manifest)
	}
}

func TestPostgresAndAuditOff(t *testing.T) {
	c, err := Parse("/g/c.json", []byte(`{"db": "postgres://u@h/db", "servers": {"a": {"url": "http://x/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != "postgres://u@h/db" || c.Audit != "postgres://u@h/db" {
		t.Errorf("db %q audit %q", c.DB, c.Audit)
	}
	c, err = Parse("/g/c.json", []byte(`{"db": "l.sqlite", "audit": "off", "pins": "p.json", "servers": {"a": {"url": "http://x/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Audit != "" || c.Pins != "/g/p.json" {
		t.Errorf("audit %q pins %q", c.Audit, c.Pins)
	}
}

// Each broken rule is named by its field's pointer and its rule.
func TestErrorsNameFieldAndRule(t *testing.T) {
	for _, tc := range []struct{ doc, pointer, rule string }{
		{`{"servers": {"a": {"command": "x"}}}`, "/db", "required"},
		{`{"db": "x", "servers": {}}`, "/servers", "minProperties"},
		{`{"db": "x", "servers": {"Bad": {"command": "x"}}}`, "/servers/Bad", "propertyNames"},
		{`{"db": "x", "servers": {"a__b": {"command": "x"}}}`, "/servers/a__b", "propertyNames"},
		{`{"db": "x", "servers": {"a_": {"command": "x"}}}`, "/servers/a_", "propertyNames"},
		{`{"db": "x", "servers": {"a": {}}}`, "/servers/a/command", "required"},
		{`{"db": "x", "servers": {"a": {"command": "x", "url": "http://h/"}}}`, "/servers/a/command", "not allowed"},
		{`{"db": "x", "servers": {"a": {"command": "x", "headers": {}}}}`, "/servers/a/headers", "not allowed"},
		{`{"db": "x", "servers": {"a": {"url": "ftp://h/"}}}`, "/servers/a/url", "pattern"},
		{`{"db": "x", "servers": {"a": {"command": "x", "timeout": "soon"}}}`, "/servers/a/timeout", "pattern"},
		{`{"db": "x", "servers": {"a": {"command": "x", "timeout": "0s"}}}`, "/servers/a/timeout", "duration"},
		{`{"db": "x", "servers": {"a": {"command": "x", "restart": {"min": "2s", "max": "1s"}}}}`, "/servers/a/restart/max", "min<=max"},
		{`{"db": "x", "servers": {"a": {"command": "x", "prompts": "yes"}}}`, "/servers/a/prompts", "type"},
		{`{"db": "x", "servers": {"a": {"command": "x", "colour": 1}}}`, "/servers/a/colour", "additionalProperties"},
		{`{"db": "x", "servers": {"a": {"command": "x"}}, "tools": {}}`, "/tools", "type"},
		{`{"db": "x", "servers": {"a": {"command": "x"}}, "pin_on_first_sight": 1}`, "/pin_on_first_sight", "type"},
		{`{"db": "x", "servers": {"a": {"command": "x"}}, "extra": 1}`, "/extra", "additionalProperties"},
		{`{"db": "x"`, "", "json"},
	} {
		_, err := Parse("/g/c.json", []byte(tc.doc))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %v, want *Error", tc.doc, err)
			continue
		}
		found := false
		for _, p := range ce.Problems {
			found = found || (p.Pointer == tc.pointer && p.Rule == tc.rule)
		}
		if !found {
			t.Errorf("%s: %v; want a problem at %q (%s)", tc.doc, err, tc.pointer, tc.rule)
		}
	}
}

func TestFileSizeCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	big := `{"db": "x", "servers": {"a": {"command": "x", "args": ["` + strings.Repeat("a", MaxFileBytes) + `"]}}}`
	if err := os.WriteFile(p, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	var ce *Error
	if !errors.As(err, &ce) || ce.Problems[0].Rule != "size" {
		t.Fatalf("err = %v, want the size rule", err)
	}
}

func TestLoadResolvesAgainstFileDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gw.json")
	if err := os.WriteFile(p, []byte(`{"db": "l.sqlite", "servers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != filepath.Join(dir, "l.sqlite") || c.Pins != filepath.Join(dir, "gw.pins.json") {
		t.Errorf("db %q pins %q", c.DB, c.Pins)
	}
}
