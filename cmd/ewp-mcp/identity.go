package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/mcp"
)

// identFlags are the flags that say who callers are.
type identFlags struct {
	agent             string // --agent: stdio's one agent
	oauth             identity.OAuthFlags
	requireCredential bool
}

func (f *identFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.agent, "agent", "", "")
	f.oauth.Register(fs)
	fs.BoolVar(&f.requireCredential, "require-credential", false, "")
}

// check refuses combinations that cannot work, before anything starts.
func (f *identFlags) check(http, auditOff bool) error {
	switch {
	case f.agent != "" && http:
		return errors.New("--agent is for stdio; over HTTP each agent presents its own credential (Authorization: Bearer)")
	case f.agent != "" && auditOff:
		return errors.New("--agent names an agent of the decision log's register; it needs the decision log (drop --audit off)")
	case (f.oauth.Given() || f.requireCredential) && !http:
		return errors.New("--jwks, --issuer, --audience, --groups-claim and --require-credential are for --http")
	}
	return f.oauth.Check()
}

// stdioAgent puts the --agent's principal on ctx; ctx unchanged without
// one. The agent must be live in the log's register at start, and is
// looked up again on every request (identity.Recheck).
func stdioAgent(ctx context.Context, cfg config, srv *mcp.Server) (context.Context, error) {
	if cfg.ident.agent == "" {
		return ctx, nil
	}
	agents := identity.AgentsOf(srv.DecisionLogStore())
	rec, err := identity.AgentNamed(ctx, agents, cfg.ident.agent)
	if err != nil {
		return nil, fmt.Errorf("--agent: %w", err)
	}
	return identity.WithStdioAgent(ctx, agents, rec), nil
}

// authenticator is who-is-asking for the HTTP server at addr: agent
// credentials from the log's register, the ingest token, and OAuth
// access tokens with --jwks.
func authenticator(ctx context.Context, cfg config, log audit.Log, addr string, logger *slog.Logger) (*identity.Authenticator, error) {
	ic := identity.Config{Agents: identity.AgentsOf(log), IngestToken: cfg.token, Required: cfg.ident.requireCredential,
		Resource: "http://" + addr + mcp.EndpointPath}
	cfg.ident.oauth.Apply(&ic)
	a, err := identity.New(ctx, ic)
	if err != nil {
		return nil, err
	}
	logger.Info("credentials", "agents", ic.Agents != nil, "ingest_token", cfg.token != "", "oauth", ic.OAuth != nil,
		"required", a.Required(), "resource_metadata", a.MetadataURL())
	return a, nil
}
