package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/auditsource"
	"github.com/ewp-go/ewp/console/ledgersource"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
)

// consoleConfig reads the operator token for an HTTP server. The agent's
// ingest token is refused as one: whoever holds the agent's credential
// would otherwise approve the agent's own actions.
func consoleConfig(c config, operatorFile string, getenv func(string) string) (config, error) {
	token, err := readToken(operatorSpec, operatorFile, getenv, &c.notes)
	if err != nil {
		return c, err
	}
	if token != "" && token == c.token {
		return c, errors.New("the operator token equals the ingest token: an agent holding its ingest token " +
			"could then sign in to the console and approve its own actions; give the operator a different token " +
			"(e.g. `openssl rand -hex 32`)")
	}
	c.operator = token
	return c, nil
}

// ledgerHolder is a store backed by the SQLite ledger (ledgerStore; test
// fakes are not), which the console reads.
type ledgerHolder interface{ Ledger() *ledger.Ledger }

// openConsole builds the operator console over the server's ledger, its
// decision log, the concept graph and the edge policies the guard loaded;
// nil when no operator token is configured. The returned close stops its
// background work.
func openConsole(cfg config, store mcp.Store, srv *mcp.Server, addr string, log *slog.Logger) (*console.Console, func(), error) {
	if cfg.operator == "" {
		return nil, func() {}, nil
	}
	lh, ok := store.(ledgerHolder)
	if !ok || lh.Ledger() == nil {
		return nil, nil, errors.New("the operator console needs the SQLite ledger (--db PATH); on PostgreSQL run it on a server with a file copy (ewp-ingest copy), or use ewp-audit")
	}
	src, err := ledgersource.New(lh.Ledger())
	if err != nil {
		return nil, nil, fmt.Errorf("operator console: %w", err)
	}
	policies, _, err := loadPolicies(cfg)
	if err != nil {
		_ = src.Close()
		return nil, nil, err
	}
	cc := console.Config{
		Evidence: src, Graph: graphstore.New(lh.Ledger(), nil).Graph, Policies: policies,
		OperatorToken: cfg.operator, Addr: addr, AllowedHosts: cfg.allowHosts,
		TLS:    false, // ewp-mcp serves plain HTTP; a TLS front would set Secure itself
		Logger: log,
	}
	wireDecisionLog(&cc, srv)
	con, err := console.New(cc)
	if err != nil {
		_ = src.Close()
		return nil, nil, err
	}
	if cc.Log == nil {
		log.Warn("operator console without a decision log (--audit off): evidence pages only, no inbox")
	}
	return con, func() { _ = con.Close(); _ = src.Close() }, nil
}

// wireDecisionLog gives the console the log this server records in: the
// inbox then answers this server's decisions, and an approval made there
// is the one may_act reads. The SQLite log also pages newest first, lists
// an approval's uses and walks its chain; the in-memory log of --demo
// offers the basic pages.
func wireDecisionLog(cc *console.Config, srv *mcp.Server) {
	l := srv.DecisionLogStore()
	if l == nil {
		return
	}
	cc.Log = l
	if sl, ok := l.(*auditsqlite.Log); ok {
		cc.LogVerify = auditsource.Verify(sl)
		cc.ListNewest = auditsource.ListNewest(sl)
		cc.Presented = auditsource.Presented(sl)
	}
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
