package config

import (
	"os"
	"strings"
	"testing"
)

// The example in docs/gateway.md is a config this package accepts, and
// the error shown there is the one it gives.
func TestDocsExample(t *testing.T) {
	raw, err := os.ReadFile("../../docs/gateway.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	_, rest, _ := strings.Cut(doc, "```json\n")
	example, _, _ := strings.Cut(rest, "```")
	c, err := Parse("/etc/ewp/gateway.json", []byte(example))
	if err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	if len(c.Servers) != 2 || c.Servers[0].Name != "fs" || c.Servers[1].URL != "https://tickets.example/mcp" {
		t.Errorf("servers = %+v", c.Servers)
	}
	bad := strings.Replace(strings.Replace(example, `"fs": {`, `"Files": {"command": "x"}, "fs": {`, 1), `"30s"`, `"10 s"`, 1)
	_, err = Parse("/etc/ewp/gateway.json", []byte(bad))
	if err == nil || !strings.Contains(doc, "\n"+err.Error()+"\n") {
		t.Errorf("docs/gateway.md should show this error as it is:\n%v", err)
	}
}
