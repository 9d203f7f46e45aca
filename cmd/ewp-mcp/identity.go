package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/mcp"
)

// identFlags are the flags that say who callers are.
type identFlags struct {
	agent                               string // --agent: stdio's one agent
	jwks, issuer, audience, groupsClaim string
	requireCredential                   bool
}

func (f *identFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.agent, "agent", "", "")
	fs.StringVar(&f.jwks, "jwks", "", "")
	fs.StringVar(&f.issuer, "issuer", "", "")
	fs.StringVar(&f.audience, "audience", "", "")
	fs.StringVar(&f.groupsClaim, "groups-claim", "", "")
	fs.BoolVar(&f.requireCredential, "require-credential", false, "")
}

// check refuses combinations that cannot work, before anything starts.
func (f *identFlags) check(http, auditOff bool) error {
	oauth := f.issuer != "" || f.audience != "" || f.groupsClaim != ""
	switch {
	case f.agent != "" && http:
		return errors.New("--agent is for stdio; over HTTP each agent presents its own credential (Authorization: Bearer)")
	case f.agent != "" && auditOff:
		return errors.New("--agent names an agent of the decision log's register; it needs the decision log (drop --audit off)")
	case (f.jwks != "" || oauth || f.requireCredential) && !http:
		return errors.New("--jwks, --issuer, --audience, --groups-claim and --require-credential are for --http")
	case oauth && f.jwks == "":
		return errors.New("--issuer, --audience and --groups-claim check OAuth access tokens; give --jwks FILE|URL too")
	case f.jwks != "" && (f.issuer == "" || f.audience == ""):
		return errors.New("--jwks needs --issuer (the exact iss tokens carry) and --audience (this server's resource URL)")
	}
	if f.jwks != "" && !isURL(f.jwks) {
		fh, err := os.Open(f.jwks)
		if err != nil {
			return fmt.Errorf("--jwks %s: cannot read it: %w", f.jwks, err)
		}
		fh.Close()
	}
	return nil
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// stdioAgent puts the --agent's principal on ctx; ctx unchanged without
// one. The agent must be live in the log's register.
func stdioAgent(ctx context.Context, cfg config, srv *mcp.Server) (context.Context, error) {
	if cfg.ident.agent == "" {
		return ctx, nil
	}
	rec, err := identity.AgentNamed(ctx, identity.AgentsOf(srv.DecisionLogStore()), cfg.ident.agent)
	if err != nil {
		return nil, fmt.Errorf("--agent: %w", err)
	}
	return identity.WithPrincipal(ctx, rec.Principal()), nil
}

// authenticator is who-is-asking for the HTTP server at addr: agent
// credentials from the log's register, the ingest token, and OAuth
// access tokens with --jwks.
func authenticator(ctx context.Context, cfg config, log audit.Log, addr string, logger *slog.Logger) (*identity.Authenticator, error) {
	ic := identity.Config{Agents: identity.AgentsOf(log), IngestToken: cfg.token, Required: cfg.ident.requireCredential,
		Resource: "http://" + addr + mcp.EndpointPath}
	if f := cfg.ident; f.jwks != "" {
		ic.OAuth = &identity.OAuth{JWKS: f.jwks, Issuer: f.issuer, Audience: f.audience, GroupsClaim: f.groupsClaim}
		if isURL(f.audience) {
			ic.Resource = f.audience // the resource the tokens are for
		}
	}
	a, err := identity.New(ctx, ic)
	if err != nil {
		return nil, err
	}
	logger.Info("credentials", "agents", ic.Agents != nil, "ingest_token", cfg.token != "", "oauth", ic.OAuth != nil,
		"required", a.Required(), "resource_metadata", a.MetadataURL())
	return a, nil
}
