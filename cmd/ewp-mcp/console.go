package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/sources"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/store"
)

// consoleConfig reads the operator token for an HTTP server. The agent's
// ingest token is refused as one: whoever holds the agent's credential
// would otherwise approve the agent's own actions.
func consoleConfig(c config, operatorFile string, getenv func(string) string) (config, error) {
	token, err := readToken(operatorSpec, operatorFile, getenv, &c.notes)
	if err != nil {
		return c, err
	}
	if problem := console.OperatorTokenProblem(token); token != "" && problem != "" {
		return c, fmt.Errorf("%s (%s or %s)", problem, operatorSpec.env, operatorSpec.flag)
	}
	if token != "" && token == c.token {
		return c, errors.New("the operator token equals the ingest token: an agent holding its ingest token " +
			"could then sign in to the console and approve its own actions; give the operator a different token " +
			"(e.g. `openssl rand -hex 32`)")
	}
	c.operator = token
	if c.consoleKey != "" && token == "" {
		return c, errors.New("--console-key signs the console's answers, but no console is served: set EWP_OPERATOR_TOKEN or --operator-token-file")
	}
	return c, nil
}

// consoleSource is a store that can show its ledger in the operator
// console (ledgerStore, over either ledger).
type consoleSource interface{ consoleLedger() store.Ledger }

// openConsole builds the operator console over the server's ledger, its
// decision log, the concept graph and the edge policies the guard loaded;
// nil when no operator token is configured. The returned close stops its
// background work.
func openConsole(cfg config, st mcp.Store, srv *mcp.Server, addr string, log *slog.Logger) (*console.Console, func(), error) {
	if cfg.operator == "" {
		return nil, func() {}, nil
	}
	var signer *audit.Signer
	if cfg.consoleKey != "" {
		var err error
		if signer, err = consoleSigner(cfg); err != nil {
			return nil, nil, err
		}
	}
	cs, ok := st.(consoleSource)
	if !ok || cs.consoleLedger() == nil {
		return nil, nil, errors.New("the operator console needs the ledger this server opened (--db)")
	}
	src, err := sources.For(cs.consoleLedger(), srv.DecisionLogStore())
	if err != nil {
		return nil, nil, fmt.Errorf("operator console: %w", err)
	}
	cc := console.Config{
		Policies: srv.EdgePolicies(), OperatorToken: cfg.operator, Addr: addr, AllowedHosts: cfg.allowHosts,
		TLS:                 false, // ewp-mcp serves plain HTTP; a TLS front would set Secure itself
		Logger:              log,
		ApprovalMaxLifetime: cfg.approvalMaxLifetime,
	}
	src.Apply(&cc)
	if signer != nil {
		cc.Signer = signer
	} else if cc.Log != nil {
		log.Warn("operator console without a key (--console-key FILE): it shows the inbox but offers no answer; approve with ewp-audit approve")
	}
	con, err := console.New(cc)
	if err != nil {
		return nil, nil, err
	}
	if cc.Log == nil {
		log.Warn("operator console without a decision log (--audit off): evidence pages only, no inbox")
	}
	return con, func() { _ = con.Close() }, nil
}

// withConsole serves the console under console.BasePath and everything
// else through the MCP handler, which answers 404 for unknown paths. The
// console checks Host and Origin itself, against the same addresses.
type withConsole struct {
	mcp     http.Handler
	console http.Handler
}

func (h withConsole) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == strings.TrimSuffix(console.BasePath, "/") || strings.HasPrefix(r.URL.Path, console.BasePath) {
		h.console.ServeHTTP(w, r)
		return
	}
	h.mcp.ServeHTTP(w, r)
}

// consoleOffHint says how to turn the console on; the startup log and
// the console's address both say it when no operator token is set. A
// server that already has a console key (--console-key, or --demo's own)
// needs only the token.
func consoleOffHint(cfg config) string {
	hint := "the operator console is off: it is served only with an operator token. " +
		"To turn it on, restart with EWP_OPERATOR_TOKEN set (or --operator-token-file FILE) to a strong token, e.g. `openssl rand -hex 32`"
	if cfg.consoleKey == "" {
		hint += ", and --console-key FILE with --operator-keys FILE to answer pending decisions from it (ewp-audit keygen makes the key)"
	}
	return hint
}

// routeConsole serves the console beside MCP, or, without one, answers
// its paths with how to turn it on rather than a bare "not found".
func routeConsole(mcpHandler http.Handler, con *console.Console, cfg config) http.Handler {
	if con != nil {
		return withConsole{mcp: mcpHandler, console: con}
	}
	msg := "Not found: " + consoleOffHint(cfg) + ".\nThe MCP endpoint is " + mcp.EndpointPath + ".\n"
	return withConsole{mcp: mcpHandler, console: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msg, http.StatusNotFound)
	})}
}

// consoleSigner loads the console's key and refuses one the gate does not
// trust (not in --operator-keys): every answer given in the console would
// then be refused.
func consoleSigner(cfg config) (*audit.Signer, error) {
	s, err := audit.LoadSigner(cfg.consoleKey)
	if err != nil {
		return nil, fmt.Errorf("--console-key: %w", err)
	}
	var keys *audit.OperatorKeys
	if cfg.operatorKeys != "" {
		if keys, err = audit.LoadOperatorKeys(cfg.operatorKeys); err != nil {
			return nil, fmt.Errorf("--operator-keys: %w", err)
		}
	}
	if !keys.Trusts(s.KeyID()) {
		return nil, fmt.Errorf("--console-key %s (%s, %s) is not in --operator-keys, so the gate would refuse every answer given in the console; add its public line: %s",
			cfg.consoleKey, s.Name, s.KeyID(), s.PublicLine())
	}
	return s, nil
}
