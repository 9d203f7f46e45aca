package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

const usage = `ewp-mcp serves an EWP evidence ledger to AI agents over MCP (the Model
Context Protocol). It answers two questions about remembered evidence: how far
does it warrant a proposition right now (warrant_now, memory_context), and may
an action rely on it (may_act)? With a concept graph in the ledger it also
guards actions: are the concepts they touch grounded (check_grounding), and do
the operator's edge policies allow them (may_act with action.concepts)?
Agents evaluate; only the operator's ingest pipeline writes.

Usage:
  ewp-mcp --demo [--http 127.0.0.1:8765]    try it: a ledger built from the embedded examples
  ewp-mcp --db PATH                         stdio, evaluate-only (the usual agent setup)
  ewp-mcp --db PATH --allow-ingest          stdio, and this one client may write
  ewp-mcp --db PATH --http 127.0.0.1:8765   Streamable HTTP at http://127.0.0.1:8765/mcp
  ewp-mcp --db PATH --policies FILE.cedar   stdio, with the operator's edge policies
  ewp-mcp --db postgres://USER@HOST/DB --http 10.0.0.5:8765 --allow-host mcp.example:8765
                                            one of many replicas over a PostgreSQL ledger
  ewp-mcp config claude-code|claude-desktop|openclaw SERVER-FLAGS...
                                            print the client's configuration for these
                                            flags, absolute paths filled in (config --help)

Flags:
  --db PATH|URL             The ledger, as created by ewp-ingest. Required unless --demo. A
                            server that cannot write opens it read-only, and it must exist.
                            A postgres:// (or postgresql://) URL serves a PostgreSQL ledger
                            made by ewp-ingest init: log in as a member of ewp_server (reads
                            the ledger, records decisions; it cannot store approvals, which
                            operators make as members of ewp_operator); every connection is
                            read-only for the ledger. Such a server holds no state of its
                            own: run as many replicas as you like behind a load balancer.
                            While the database is unreachable calls are answered
                            EWP_STORE_UNAVAILABLE within the connect timeout (5 s, or
                            connect_timeout=S in the URL); the pool reconnects by itself.
  --standby URL             PostgreSQL: a streaming-replication standby of --db to read
                            from. may_act (and its stale-view check) always reads the
                            primary, so an action never rests on a snapshot older than
                            the newest one stored; approvals are consumed on the primary.
  --standby-max-lag BYTES   With --standby: read from the primary whenever the standby is more
                            than BYTES of WAL behind (two small queries per read; give it
                            kilobytes at least). Default 0: the standby whatever its lag.
  --db-pool N               PostgreSQL: most connections of each pool (the ledger's, the
                            decision log's, the standby's). Default max(4, 2 x cores);
                            pool_max_conns=N in a pool's URL wins over it.
                            replicas x pools x N must fit the server's max_connections.
  --db-statement-timeout DUR
                            PostgreSQL: the server cancels a statement running longer
                            (default: --request-timeout); statement_timeout=MS in a
                            pool's URL wins over it.
  --demo                    Build a ledger from the embedded example evidence (four
                            propositions: accepted, contradicted, stale, incomplete; one
                            with a history) and the filesystem demo concept graph, guarded
                            by the demo edge policies (unless --policies names others),
                            with a decision log (DIR/demo.sqlite.audit) and an operator key
                            pair (DIR/operator.key); ask may_act once as an agent, so a
                            confirmation waits in the inbox; serve it, and print the
                            ewp-audit, curl and console commands to try next.
  --demo-dir DIR            Where --demo keeps its files, kept on exit; a DIR that holds a
                            demo already is served as it is. Default: a new temporary
                            directory, deleted on exit.
  --tools FILE.json         The tool manifest (schemas/manifest.schema.json): with --http,
                            serves the client hook endpoints POST /hooks/claude-code and
                            POST /hooks/tool-call, each call described by it and asked
                            of the gate (docs/hooks.md).
  --policies FILE.cedar     Edge policies for the grounding guard (Cedar forbid policies,
                            each placed on one APPLIES_TO edge by @source, @target and
                            @source_depth annotations). Loaded once at start, never from
                            an agent. The server refuses to start if a placement has no
                            such edge in the ledger's concept graph, listing each one.
  --call-policies FILE      Cedar forbid policies over the tool calls of the hook endpoints
                            and the gateway (principal Agent::"NAME" in its groups, action
                            Action::"call", resource Tool::"SERVER/TOOL", context.input the
                            arguments); @confirm("…") asks for a confirmation. See
                            MCP_CONTRACT.md "Call policies".
  --budgets FILE.json       Budgets per agent or group: calls_per_minute, high_risk_per_day,
                            irreversible_per_day (schemas/budgets.schema.json). A call past
                            one is DENY naming the budget. Counts are kept in the decision
                            log (so not with --audit off). See docs/agents.md#budgets.
  --http ADDR               Serve HTTP on ADDR instead of stdio. "8765" or ":8765" binds
                            127.0.0.1. Requests must name this address in Host (and
                            Origin, if any); anything else gets 403 (DNS rebinding).
  --allow-host HOST:PORT    Also accept this Host/Origin, e.g. when binding beyond
                            loopback. Repeatable.
  --allow-ingest            stdio only: the client may write (evidence_view_put,
                            evidence_record, check_record). Refused with --http, where it
                            would let anyone who can connect write.
  --ingest-token-file FILE  HTTP only: the ingest token, in a file readable by you alone.
                            Writers send "Authorization: Bearer <token>" or
                            "X-EWP-Ingest-Token: <token>"; other callers are evaluate-only.
  --agent NAME              stdio only: serve every call as this agent (ewp-audit agents add
                            NAME): its name and groups are the principal of each decision.
                            Refused at start when the log's register does not hold it or it
                            was revoked; looked up again on every request, so a revocation
                            refuses the next one. Without it stdio calls are anonymous.
  --jwks FILE|URL           HTTP only: accept OAuth 2.1 access tokens, JWTs signed (RS256, ES256
                            or EdDSA) by a key of this JWKS: a file, or an http(s) URL fetched
                            at start (5 s timeout, 256 KiB at most), again when a token names an
                            unknown kid (at most every 30 s) and hourly. Needs --issuer and
                            --audience; every HTTP caller then needs a credential (401 with the
                            Protected Resource Metadata's URL otherwise). See docs/agents.md.
  --issuer ISS              With --jwks: the exact iss tokens must carry.
  --audience AUD            With --jwks: an aud tokens must carry, this server's resource URL
                            (e.g. https://ewp.example/mcp; it is then the metadata's resource).
  --groups-claim NAME       With --jwks: the claim holding the subject's groups (an array of
                            strings, at most 64 of 256 bytes). Default: no groups.
  --require-credential      HTTP only: refuse callers without a valid credential (an agent's,
                            the ingest token, or an access token) with 401 instead of serving
                            them as the anonymous principal.
  --request-timeout DUR     How long one tool call or resource read may run (default 10s).
                            A call past it is answered EWP_REFUSE_TIMEOUT; a write that
                            timed out was not stored. The deadline is the request's own:
                            a client that closes its input or half-closes its socket after
                            a complete request still gets the answer.
  --max-concurrent-calls N  How many tool calls are evaluated at once (default one per
                            processor). A call beyond it waits for a slot within its own
                            --request-timeout and is answered EWP_REFUSE_TIMEOUT if none
                            frees. Peak memory is about N times one call's cost.
  --max-request-bytes N     The largest JSON-RPC message, an HTTP body or a stdio line
                            (default 1048576). Larger: HTTP 413, or on stdio a JSON-RPC
                            error naming the limit, the line skipped and the stream going on.
  --max-view-bytes N        Limits on one EvidenceView, from a caller or from the ledger:
  --max-records N           its JSON size, its records (assertions, evidence, checks,
  --max-subjects N          conflicts and lineage together), each subjects-like list, and
  --max-string-bytes N      each string. 0 (the default) is the kernel's default (4 MiB,
                            20000, 10000, 64 KiB); -1 is no limit. A view over one is
                            refused with EWP_REFUSE_LIMIT_EXCEEDED naming the limit.
  --audit PATH|off          The decision log: every may_act and check_grounding call is
                            recorded there before it is answered, and operator approvals
                            (ewp-audit approve) are read from it. Default: beside the
                            ledger (PATH.audit). "off" runs without one: nothing is
                            recorded and may_act refuses approval_id.
  --approval-max-lifetime DUR
                            The longest an approval is honoured after it was created,
                            whatever until it names (default 24h); the console refuses
                            to create one that would outlive it.
  --replay-window DUR       How long after a decision a retry with its idempotency_key
                            gets it back (default 10m); later, the key is refused with
                            EWP_REFUSE_IDEMPOTENCY_KEY_EXPIRED.
  --redact-arguments NAMES  Comma-separated member names whose values the decision log
                            records as "[redacted]" in an action's arguments (which the
                            operator reads before approving), at any depth; a member is
                            redacted when its name contains one, ignoring case. Default:
                            password,passwd,passphrase,secret,token,api_key,apikey,api-key,
                            private_key,authorization,cookie,credential,session.
                            "" redacts nothing. arguments_hash always covers them whole.
  --notify-url URL          POST a notice to this webhook for each new decision awaiting
                            confirmation (REQUIRE_CONFIRMATION), signed: header X-EWP-Signature
                            is "sha256=" and the hex HMAC-SHA256, keyed with the secret, of
                            X-EWP-Timestamp's value, ".", and the body. Sent from a queue of 256,
                            retried with backoff (1s doubling, 6 tries); the gate never waits
                            for it, and a full queue drops notices, logging the count.
  --notify-secret-file FILE The webhook's signing secret (16 bytes at least); never printed.
  --notify-format generic|slack|teams
                            generic: the notice's JSON fields (decision_id, action, reasons,
                            the approve command); slack or teams: {"text": …} for an incoming
                            webhook, with what the agent wrote escaped for the app's markup.
  --operator-token-file FILE
                            HTTP only: the operator token, in a file readable by you alone.
                            With it (or EWP_OPERATOR_TOKEN) the operator console is served at
                            /console/ beside /mcp: the evidence, the gate's decisions, the
                            inbox of confirmations to approve or reject, the concept graph.
                            Sign in with the token; it must differ from the ingest token
                            (an agent's credential never opens the console). Without a
                            decision log (--audit off) the console shows the evidence only.
  --operator-keys FILE      The operator public keys (one "ed25519 BASE64 NAME" line each, as
                            ewp-audit keygen prints them; # comments): an approval counts only
                            when one of these keys signed it and the log's chain recorded it as
                            stored. Without it every approval is refused
                            (APPROVAL_NO_OPERATOR_KEYS). --demo makes its own key pair.
  --console-key FILE        HTTP, with the console: the operator key (ewp-audit keygen) the
                            console signs its answers with, as "NAME/OPERATOR"; list its public
                            key in --operator-keys. Without it the console offers no answer.
                            Give it only to a server run as another OS user than the agent's:
                            whoever can read it can approve. (On stdio the server runs as the
                            agent's user, so there is no console there.)
  --tool-names default|reference
                            Serve the eight EWP tools under this server's names (default) or
                            under the EWP reference's names and argument shapes
                            (ewp_warrant_now, ewp_may_act, ewp_check_record {proposition_id,
                            check}, …), for clients and prompts written for the reference.
                            The guard and decision tools keep their names. See MCP_CONTRACT.md.
  --version                 The protocol, policy and release lock this binary was built with.
  --help                    This text.

Environment:
  EWP_INGEST_TOKEN          HTTP only: the ingest token, instead of --ingest-token-file.
  EWP_OPERATOR_TOKEN        HTTP only: the operator token, instead of --operator-token-file;
                            serves the console at /console/ (with --demo: on the demo ledger).
                            A token is never accepted on the command line, where other
                            users can read it.

Examples:
  ewp-ingest --db ewp.sqlite --attest-trusted-origins fixtures/examples/quickstart.json
  ewp-mcp config claude-code --db ewp.sqlite      # prints: claude mcp add ewp -- /abs/ewp-mcp --db /abs/ewp.sqlite
  claude mcp add --transport http ewp http://127.0.0.1:8765/mcp

  ewp-mcp --db ewp.sqlite --http 127.0.0.1:8765 &
  curl -s http://127.0.0.1:8765/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call",
    "params":{"name":"memory_context","arguments":{"proposition_id":"P-db-major-version"}}}'

  mkdir -p -m 700 ~/.ewp && openssl rand -hex 32 > ~/.ewp/ingest-token
  EWP_INGEST_TOKEN="$(cat ~/.ewp/ingest-token)" ewp-mcp --db ewp.sqlite --http 127.0.0.1:8765

  openssl rand -hex 32 > ~/.ewp/operator
  EWP_OPERATOR_TOKEN="$(cat ~/.ewp/operator)" ewp-mcp --db ewp.sqlite --http 127.0.0.1:8765
  # then open http://127.0.0.1:8765/console/ and sign in with that token

  A client starts a stdio server from a directory of its own: give it absolute
  paths (ewp-mcp config fills them in).

Exit status:
  0  stopped cleanly (a signal, or the client closed stdio)
  1  the server could not start or failed while serving (the ledger, the
     decision log, the guard, the address)
  2  the command line is wrong: a bad flag, or a file it names (--policies,
     --operator-keys, --console-key, a token file) cannot be read

Logs go to standard error; over stdio, standard output carries only MCP messages.
`

// config is the validated command line.
type config struct {
	db          string
	demo        bool   // serve a temporary ledger of the embedded examples
	demoDir     string // --demo-dir: where the demo keeps its files ("" a temporary directory)
	httpAddr    string // "" means stdio
	allowHosts  []string
	allowIngest bool
	token       string // the HTTP ingest token, "" when none
	operator    string // the console's operator token, "" when none (no console)
	policies    string // the operator's Cedar edge-policy file, "" when none
	tools       string // --tools: the tool manifest the hook endpoints describe calls by
	timeout     time.Duration
	maxRequest  int
	maxCalls    int
	limits      warrant.Limits
	audit       string   // --audit: the decision log's path, "off", or "" for the default
	redact      []string // --redact-arguments; nil: mcp.DefaultRedactedArguments
	// approvalMaxLifetime and replayWindow bound approvals and replays
	// (mcp.DecisionLog); 0 is package audit's default.
	approvalMaxLifetime, replayWindow time.Duration
	// operatorKeys is the operator public keys file; consoleKey the
	// console's private key file ("" when none).
	operatorKeys, consoleKey string
	toolNames                string // --tool-names: mcp.ToolNamesDefault or mcp.ToolNamesReference
	// PostgreSQL only (--db postgres://…)
	standby            string        // --standby: a streaming-replication standby's URL for reads
	standbyMaxLag      int64         // --standby-max-lag: bytes of WAL behind past which reads go to the primary
	dbPool             int           // --db-pool: most connections per pool (0: the default)
	dbStatementTimeout time.Duration // --db-statement-timeout (0: the request timeout)
	notify             notifyFlags   // --notify-url, --notify-secret-file, --notify-format
	ident              identFlags    // --agent, --jwks, --issuer, --audience, --groups-claim, --require-credential
	notes              []string

	// callPolicies and budgets are the policy-layer files (package
	// policylayers), "" when none.
	callPolicies, budgets string
}

// writable is whether this process may write to the ledger at all.
func (c config) writable() bool { return c.allowIngest || c.token != "" }

type hostList []string

func (h *hostList) String() string     { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

// errHelp asks for the usage text on standard output and exit status 0.
var errHelp = errors.New("help requested")

func parseConfig(args []string, getenv func(string) string) (config, error) {
	if err := refuseTokenInArgv(args); err != nil {
		return config{}, err
	}
	var c config
	var tokenFile, operatorFile string
	var hosts hostList
	fs := flag.NewFlagSet("ewp-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by main
	fs.StringVar(&c.db, "db", "", "")
	fs.BoolVar(&c.demo, "demo", false, "")
	fs.StringVar(&c.demoDir, "demo-dir", "", "")
	fs.StringVar(&c.httpAddr, "http", "", "")
	fs.Var(&hosts, "allow-host", "")
	fs.BoolVar(&c.allowIngest, "allow-ingest", false, "")
	fs.StringVar(&tokenFile, "ingest-token-file", "", "")
	fs.StringVar(&operatorFile, "operator-token-file", "", "")
	fs.StringVar(&c.policies, "policies", "", "")
	fs.StringVar(&c.callPolicies, "call-policies", "", "")
	fs.StringVar(&c.budgets, "budgets", "", "")
	fs.StringVar(&c.tools, "tools", "", "")
	fs.DurationVar(&c.timeout, "request-timeout", mcp.DefaultRequestTimeout, "")
	fs.IntVar(&c.maxRequest, "max-request-bytes", mcp.MaxBodyBytes, "")
	fs.IntVar(&c.maxCalls, "max-concurrent-calls", mcp.DefaultMaxConcurrentCalls(), "")
	fs.IntVar(&c.limits.MaxViewBytes, "max-view-bytes", 0, "")
	fs.IntVar(&c.limits.MaxRecords, "max-records", 0, "")
	fs.IntVar(&c.limits.MaxSubjects, "max-subjects", 0, "")
	fs.IntVar(&c.limits.MaxStringBytes, "max-string-bytes", 0, "")
	fs.StringVar(&c.audit, "audit", "", "")
	fs.StringVar(&c.operatorKeys, "operator-keys", "", "")
	fs.StringVar(&c.consoleKey, "console-key", "", "")
	fs.StringVar(&c.toolNames, "tool-names", mcp.ToolNamesDefault, "")
	fs.Func("redact-arguments", "", func(v string) error {
		c.redact = []string{} // given, even empty: the operator's list replaces the default
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.redact = append(c.redact, n)
			}
		}
		return nil
	})
	fs.StringVar(&c.standby, "standby", "", "")
	fs.Int64Var(&c.standbyMaxLag, "standby-max-lag", 0, "")
	fs.IntVar(&c.dbPool, "db-pool", 0, "")
	fs.DurationVar(&c.dbStatementTimeout, "db-statement-timeout", 0, "")
	fs.DurationVar(&c.approvalMaxLifetime, "approval-max-lifetime", audit.DefaultMaxLifetime, "")
	fs.DurationVar(&c.replayWindow, "replay-window", audit.DefaultReplayWindow, "")
	c.notify.register(fs)
	c.ident.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	c.allowHosts = hosts
	switch {
	case c.toolNames != mcp.ToolNamesDefault && c.toolNames != mcp.ToolNamesReference:
		return c, fmt.Errorf("--tool-names %q: want default (warrant_now, may_act, …) or reference (the EWP reference's ewp_warrant_now, ewp_may_act, …)", c.toolNames)
	case c.timeout <= 0:
		return c, fmt.Errorf("--request-timeout %v: want a positive duration such as 10s or 1m", c.timeout)
	case c.maxCalls <= 0:
		return c, fmt.Errorf("--max-concurrent-calls %d: want a positive number of calls", c.maxCalls)
	case c.maxRequest <= 0:
		return c, fmt.Errorf("--max-request-bytes %d: want a positive number of bytes", c.maxRequest)
	case c.demo && c.db != "":
		return c, errors.New("--demo builds its own ledger; leave out --db")
	case c.demoDir != "" && !c.demo:
		return c, errors.New("--demo-dir is where --demo keeps its files; give --demo too")
	case c.db == "" && !c.demo:
		return c, errors.New("--db PATH is required: the ledger to serve (or try --demo; see --help)")
	case !store.IsPostgres(c.db) && (c.standby != "" || c.dbPool != 0 || c.dbStatementTimeout != 0):
		return c, errors.New("--standby, --db-pool and --db-statement-timeout are for a PostgreSQL ledger (--db postgres://…)")
	case c.standby != "" && !store.IsPostgres(c.standby):
		return c, fmt.Errorf("--standby %q: want a postgres:// URL of a streaming-replication standby", pgurl.Redact(c.standby))
	case c.standbyMaxLag != 0 && c.standby == "":
		return c, errors.New("--standby-max-lag needs --standby")
	case c.approvalMaxLifetime <= 0 || c.replayWindow <= 0:
		return c, errors.New("--approval-max-lifetime and --replay-window want a positive duration such as 24h or 10m")
	case c.dbPool < 0 || c.dbStatementTimeout < 0 || c.standbyMaxLag < 0:
		return c, errors.New("--db-pool and --db-statement-timeout must be positive (0 for the default)")
	}
	if err := readableInputs(c); err != nil {
		return c, err
	}
	if err := c.notify.check(c.audit == auditOff); err != nil {
		return c, err
	}
	if err := c.ident.check(c.httpAddr != "", c.audit == auditOff); err != nil {
		return c, err
	}
	if c.httpAddr == "" {
		return stdioConfig(c, tokenFile, operatorFile, getenv)
	}
	c, err := httpConfig(c, tokenFile, getenv)
	if err != nil {
		return c, err
	}
	return consoleConfig(c, operatorFile, getenv)
}

// readableInputs checks the files the server reads at start (policies,
// operator keys, the console key) before anything starts, so a missing
// one is a usage error (exit 2), as a missing token file is, not a
// failure to serve (exit 1).
func readableInputs(c config) error {
	for _, f := range []struct{ flag, path string }{
		{"--policies", c.policies}, {"--operator-keys", c.operatorKeys}, {"--console-key", c.consoleKey},
		{"--call-policies", c.callPolicies}, {"--budgets", c.budgets},
	} {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err == nil && st.IsDir() {
			err = errors.New("it is a directory; name the file")
		}
		if err == nil {
			var fh *os.File
			if fh, err = os.Open(f.path); err == nil {
				fh.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("%s %s: cannot read it: %w", f.flag, f.path, err)
		}
	}
	return nil
}

// refuseTokenInArgv catches a token given as a flag: argv is visible to
// every user of the machine, so the server will not start with one.
func refuseTokenInArgv(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "ingest-token", "token":
			return errors.New("a token on the command line is visible to every user of this machine; " +
				"set EWP_INGEST_TOKEN or use --ingest-token-file FILE")
		case "operator-token":
			return errors.New("--operator-token: a token on the command line is visible to every user of this machine " +
				"(ps, /proc), and the operator token approves what agents may do; " +
				"set EWP_OPERATOR_TOKEN or use --operator-token-file FILE")
		}
	}
	return nil
}

func stdioConfig(c config, tokenFile, operatorFile string, getenv func(string) string) (config, error) {
	if tokenFile != "" {
		return c, errors.New("--ingest-token-file is for --http; on stdio, --allow-ingest grants the ingest role")
	}
	if operatorFile != "" {
		return c, errors.New("--operator-token-file is for --http: the operator console is a web page, served beside /mcp")
	}
	if c.consoleKey != "" {
		return c, errors.New("--console-key is for --http with the operator console; on stdio the server runs as the agent's OS user, " +
			"which could read the key: approve with ewp-audit approve and your own key")
	}
	if getenv("EWP_OPERATOR_TOKEN") != "" {
		c.notes = append(c.notes, "EWP_OPERATOR_TOKEN is ignored on stdio; the operator console is served only with --http")
	}
	if len(c.allowHosts) > 0 {
		return c, errors.New("--allow-host is for --http")
	}
	if getenv("EWP_INGEST_TOKEN") != "" {
		c.notes = append(c.notes, "EWP_INGEST_TOKEN is ignored on stdio; --allow-ingest grants the ingest role")
	}
	return c, nil
}

func httpConfig(c config, tokenFile string, getenv func(string) string) (config, error) {
	if c.allowIngest {
		return c, errors.New("--allow-ingest is refused with --http: it would let anyone who can connect write; " +
			"give writers the ingest token (EWP_INGEST_TOKEN or --ingest-token-file) instead")
	}
	addr, err := bindAddr(c.httpAddr)
	if err != nil {
		return c, err
	}
	c.httpAddr = addr
	if host, _, _ := net.SplitHostPort(addr); isUnspecified(host) && len(c.allowHosts) == 0 {
		return c, fmt.Errorf("--http %s listens on every interface, so no Host can be trusted by default; "+
			"name the host clients use with --allow-host HOST:PORT", addr)
	}
	c.token, err = ingestToken(tokenFile, getenv, &c.notes)
	return c, err
}

// bindAddr defaults the host to 127.0.0.1: the server is local unless the
// operator says otherwise.
func bindAddr(s string) (string, error) {
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || port == "" {
		return "", fmt.Errorf("--http %q: want HOST:PORT, :PORT or PORT", s)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// tokenSpec names one credential for readToken's messages.
type tokenSpec struct {
	what    string // "ingest token"
	env     string // "EWP_INGEST_TOKEN"
	flag    string // "--ingest-token-file"
	unset   string // what unsetting the variable means
	guessed string // what guessing a short one lets an attacker do
}

var (
	ingestSpec = tokenSpec{what: "ingest token", env: "EWP_INGEST_TOKEN", flag: "--ingest-token-file",
		unset: "serve evaluate-only", guessed: "write to the ledger"}
	operatorSpec = tokenSpec{what: "operator token", env: "EWP_OPERATOR_TOKEN", flag: "--operator-token-file",
		unset: "serve without the console", guessed: "open the console and approve what agents may do"}
)

// ingestToken reads the ingest token (see readToken).
func ingestToken(file string, getenv func(string) string, notes *[]string) (string, error) {
	return readToken(ingestSpec, file, getenv, notes)
}

// readToken reads a token from its file or its environment variable (not
// both, so which one is in force is never a guess). A token of only
// whitespace is refused rather than taken for "no token", which would
// quietly turn a writer's server into an evaluate-only one (or drop the
// console); a short one is served with a warning.
func readToken(spec tokenSpec, file string, getenv func(string) string, notes *[]string) (string, error) {
	env := getenv(spec.env)
	if file == "" {
		token := strings.TrimSpace(env)
		if env != "" && token == "" {
			return "", fmt.Errorf("%s holds only whitespace; set a real token (e.g. `openssl rand -hex 32`) "+
				"or unset it to %s", spec.env, spec.unset)
		}
		warnShortToken(spec, token, notes)
		return token, nil
	}
	if env != "" {
		return "", fmt.Errorf("the %s is given twice (%s and %s); keep one", spec.what, spec.env, spec.flag)
	}
	b, info, err := opfile.Read(file, opfile.MaxSecretBytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", spec.flag, err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		*notes = append(*notes, fmt.Sprintf("%s is readable by others (mode %v); chmod 600 it", file, info.Mode().Perm()))
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s %s is empty or holds only whitespace; put a real token in it "+
			"(e.g. `openssl rand -hex 32 > %s`)", spec.flag, file, file)
	}
	warnShortToken(spec, token, notes)
	return token, nil
}

// minTokenBytes is the shortest token served without a warning.
const minTokenBytes = 16

func warnShortToken(spec tokenSpec, token string, notes *[]string) {
	if token != "" && len(token) < minTokenBytes {
		*notes = append(*notes, fmt.Sprintf("the %s is only %d bytes: anyone who can reach this port and "+
			"guess it can %s; use at least %d random bytes (e.g. `openssl rand -hex 32`)", spec.what, len(token), spec.guessed, minTokenBytes))
	}
}
