package identity

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The OAuth flags every HTTP entrance shares: a combination that cannot
// work is refused naming what to add, and a good one becomes the
// Config's OAuth, with an http(s) audience as the resource.
func TestOAuthFlags(t *testing.T) {
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwks, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) OAuthFlags {
		var f OAuthFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--issuer", "i"}, "give --jwks FILE|URL too"},
		{[]string{"--groups-claim", "g"}, "give --jwks FILE|URL too"},
		{[]string{"--jwks", jwks, "--issuer", "i"}, "--jwks needs --issuer"},
		{[]string{"--jwks", "/nonexistent/jwks.json", "--issuer", "i", "--audience", "a"}, "cannot read it"},
	} {
		if err := parse(c.args...).Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	var none Config
	parse().Apply(&none)
	if none.OAuth != nil || parse().Given() || parse().Check() != nil {
		t.Errorf("no flags: %+v", none)
	}
	f := parse("--jwks", jwks, "--issuer", "https://auth.example", "--audience", "https://gw.example/mcp", "--groups-claim", "groups")
	c := Config{Resource: "http://127.0.0.1:1/mcp"}
	f.Apply(&c)
	if err := f.Check(); err != nil || c.OAuth == nil || *c.OAuth != (OAuth{JWKS: jwks, Issuer: "https://auth.example",
		Audience: "https://gw.example/mcp", GroupsClaim: "groups"}) || c.Resource != "https://gw.example/mcp" {
		t.Errorf("good flags: %v %+v %+v", err, c, c.OAuth)
	}
	c = Config{Resource: "http://127.0.0.1:1/mcp"}
	parse("--jwks", jwks, "--issuer", "i", "--audience", "urn:ewp").Apply(&c)
	if c.Resource != "http://127.0.0.1:1/mcp" {
		t.Errorf("a non-URL audience replaced the resource: %q", c.Resource)
	}
}
