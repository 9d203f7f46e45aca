// Command ewp-gateway puts the EWP gate in front of the MCP servers an
// agent uses: every tool call is described by the operator's manifest,
// judged and recorded by the gate, and only then forwarded. Run it with
// --help for how to use it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/release"
)

const usage = `ewp-gateway puts the EWP gate in front of the MCP servers your agent uses.
The agent connects to the gateway instead of to each server; the gateway
lists their tools as SERVER__TOOL and, for every tools/call:

  1. the operator's manifest (the config's "tools") says what the call is:
     its kind, risk, reversibility, the concepts its arguments touch (paths
     canonicalised first: ../, //, symlinks do not escape a rule) and the
     propositions it relies on. The agent declares nothing. A call no rule
     matches is refused (or needs confirmation, if "default" says so).
  2. the gate judges it as it judges may_act (warrant of every proposition,
     grounding, edge policies, call policies, budgets; an irreversible or
     high-risk call with no evidence needs at least a confirmation) and
     records the decision in the decision log BEFORE anything is forwarded.
  3. MAY_ACT: the call is forwarded; its result carries _meta
     "ewp/decision_id" and its outcome (ok, tool_error, failed, with the
     sha256 of the result) is recorded after the downstream answers.
     DENY: a tool error with the reasons. REQUIRE_CONFIRMATION: a tool
     error naming the pending decision and where an operator approves it;
     once approved with ewp-audit approve --once, the identical call (same
     agent, tool and arguments) passes exactly once.

Tools whose definition (name, description, input schema) is not pinned, or
changed since it was, are withheld and their calls refused until the
operator pins them again (ewp-gateway pin).

Usage:
  ewp-gateway --config FILE                  stdio (what an MCP client starts)
  ewp-gateway --config FILE --http ADDR      Streamable HTTP at http://ADDR/mcp
  ewp-gateway pin --config FILE [SERVER...]  connect to the servers (all, or those
                                             named) and pin the tool definitions
                                             they offer now
  ewp-gateway --version | --help

Flags:
  --config FILE             The gateway's JSON config (schemas/gateway-config.schema.json;
                            docs/gateway.md explains every field): the ledger (db), the
                            decision log (audit), edge and call policies, budgets, operator
                            keys, the console URL, the downstream servers, the manifest
                            (tools, default) and the pins. Relative paths in it are read
                            against its directory.
                            Errors name the field (a JSON pointer) and the rule it breaks.
  --http ADDR               Serve Streamable HTTP on ADDR (host:port; 127.0.0.1:0 picks a
                            port) instead of stdio, and the client hook endpoints beside it
                            (POST /hooks/claude-code, /hooks/tool-call; docs/hooks.md). Requests must name ADDR in Host and
                            Origin (403 otherwise); bodies over --max-request-bytes get 413.
  --allow-host HOST:PORT    With --http: another name requests may use in Host/Origin
                            (repeatable), for a gateway behind a known name.
  --max-request-bytes N     The largest request: an HTTP body (413 beyond it) or a stdio line
                            (skipped and answered with a JSON-RPC error) (default 1048576).
  --agent NAME              stdio: every call is this agent's (ewp-audit agents add NAME makes
                            one): the decisions, the approvals and the budgets are its own.
                            Looked up again on every call: once revoked, calls are refused.
                            Without it a stdio caller is anonymous.
  --require-credential      HTTP: refuse a request without a valid agent credential (401 with
                            a WWW-Authenticate challenge naming the resource metadata). Without
                            it a request with no credential is anonymous, and one with a bad
                            credential is refused all the same. Credentials are looked up in
                            the decision log's agent register on every request, so a
                            revocation holds from the next call (docs/agents.md).
  --jwks FILE|URL           HTTP: also accept OAuth 2.1 access tokens (JWTs) signed by a key of
                            this JWKS, as ewp-mcp --jwks does (docs/agents.md#oauth-21-access-tokens).
                            Every request then needs a credential: an agent's or a token.
  --issuer ISS              With --jwks: the exact iss the tokens carry.
  --audience AUD            With --jwks: an aud the tokens must hold (the gateway's resource URL;
                            an http(s) one is what the resource metadata names).
  --groups-claim NAME       With --jwks: the claim holding the caller's groups (a string or an
                            array of strings), for call policies, budgets and edge policies.

Approving a pending call (as the operator, with your operator key):
  ewp-audit --db LEDGER approve --once DECISION_ID --key ~/.ewp/operator.key
  or the console page the error names (console_url in the config).
Then the agent retries the identical call; it passes once.

The decision log holds every call with its outcome:
  ewp-audit --db LEDGER export

Exit status: 0 after a clean shutdown (stdin closed, SIGINT, SIGTERM), 1 on
a failure, 2 on a usage error.
`

// errHelp asks for the usage text.
var errHelp = errors.New("help")

// options is the command line.
type options struct {
	config            string
	httpAddr          string
	allowHosts        []string
	maxRequest        int
	pin               bool
	agent             string   // stdio: every call is this agent's
	servers           []string // pin: the servers named (none: all)
	requireCredential bool
	oauth             identity.OAuthFlags // --jwks, --issuer, --audience, --groups-claim (HTTP)
}

type hostList []string

func (h *hostList) String() string     { return fmt.Sprint(*h) }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

func parseArgs(args []string) (options, error) {
	var o options
	if len(args) > 0 && args[0] == "pin" {
		o.pin = true
		args = args[1:]
	}
	fs := flag.NewFlagSet("ewp-gateway", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.config, "config", "", "")
	fs.StringVar(&o.httpAddr, "http", "", "")
	fs.Var((*hostList)(&o.allowHosts), "allow-host", "")
	fs.IntVar(&o.maxRequest, "max-request-bytes", 1<<20, "")
	fs.StringVar(&o.agent, "agent", "", "")
	fs.BoolVar(&o.requireCredential, "require-credential", false, "")
	o.oauth.Register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, fmt.Errorf("%w (ewp-gateway --help says how to use it)", err)
	}
	if o.pin {
		o.servers = fs.Args()
	}
	switch {
	case fs.NArg() > 0 && !o.pin:
		return o, fmt.Errorf("unexpected argument %q (ewp-gateway --help says how to use it)", fs.Arg(0))
	case o.config == "":
		return o, errors.New("--config FILE is required: the gateway's JSON config (ewp-gateway --help, docs/gateway.md)")
	case o.maxRequest < 1024:
		return o, fmt.Errorf("--max-request-bytes %d: at least 1024", o.maxRequest)
	case o.pin && (o.httpAddr != "" || o.agent != "" || o.requireCredential || o.oauth.Given()):
		return o, errors.New("pin takes --config only")
	case o.agent != "" && o.httpAddr != "":
		return o, errors.New("--agent is for stdio; over HTTP each agent presents its own credential (Authorization: Bearer)")
	case (o.requireCredential || o.oauth.Given()) && o.httpAddr == "":
		return o, errors.New("--jwks, --issuer, --audience, --groups-claim and --require-credential are for --http")
	}
	return o, o.oauth.Check()
}

func main() {
	release.AnswerVersion("ewp-gateway")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status. stdout carries
// only the MCP stream (stdio), the help text or pin's report; the log
// goes to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ewp-gateway:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if o.pin {
		err = pin(ctx, o, stdout, log)
	} else {
		err = serve(ctx, o, stdin, stdout, log)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ewp-gateway:", err)
		return 1
	}
	return 0
}
