package identity

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
)

// OAuthFlags are the command-line flags of OAuth access tokens, the same
// on every HTTP entrance (ewp-mcp, ewp-gateway): --jwks, --issuer,
// --audience and --groups-claim.
type OAuthFlags struct {
	JWKS, Issuer, Audience, GroupsClaim string
}

// Register adds the flags to fs (their help is the command's usage text).
func (f *OAuthFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.JWKS, "jwks", "", "")
	fs.StringVar(&f.Issuer, "issuer", "", "")
	fs.StringVar(&f.Audience, "audience", "", "")
	fs.StringVar(&f.GroupsClaim, "groups-claim", "", "")
}

// Given is whether any of the flags was given.
func (f OAuthFlags) Given() bool {
	return f.JWKS != "" || f.Issuer != "" || f.Audience != "" || f.GroupsClaim != ""
}

// Check refuses a combination that cannot work, and a JWKS file that
// cannot be read, before anything starts.
func (f OAuthFlags) Check() error {
	switch {
	case f.JWKS == "" && f.Given():
		return errors.New("--issuer, --audience and --groups-claim check OAuth access tokens; give --jwks FILE|URL too")
	case f.JWKS != "" && (f.Issuer == "" || f.Audience == ""):
		return errors.New("--jwks needs --issuer (the exact iss tokens carry) and --audience (this server's resource URL)")
	}
	if f.JWKS != "" && !isURL(f.JWKS) {
		fh, err := os.Open(f.JWKS)
		if err != nil {
			return fmt.Errorf("--jwks %s: cannot read it: %w", f.JWKS, err)
		}
		fh.Close()
	}
	return nil
}

// Apply puts the flags' OAuth on c (nothing without --jwks). An http(s)
// --audience is the resource the tokens are for, so it becomes
// c.Resource, which the metadata and the challenge name.
func (f OAuthFlags) Apply(c *Config) {
	if f.JWKS == "" {
		return
	}
	c.OAuth = &OAuth{JWKS: f.JWKS, Issuer: f.Issuer, Audience: f.Audience, GroupsClaim: f.GroupsClaim}
	if isURL(f.Audience) {
		c.Resource = f.Audience
	}
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}
