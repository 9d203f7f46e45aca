// Command ewp-hook-local is ewp-hook claude-code's local mode: the same
// Claude Code command hook, deciding over a local ledger and decision log
// instead of asking a server. It is a binary of its own because what it
// links (SQLite, Cedar, the manifest's JSON Schema) costs ~25 ms of
// package initialisation, which the forwarding hook must not pay on every
// tool call; `ewp-hook claude-code --db …` runs it in its place.
//
//	ewp-hook-local claude-code --db LEDGER --tools FILE --agent NAME [--policies FILE] [--call-policies FILE]
//	                           [--budgets FILE] [--audit PATH] [--operator-keys FILE] [--timeout S]
//
// Any failure exits 2 (Claude Code's block) with the reason on stderr.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/hook"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/hookflags"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/internal/policylayers"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/store"
)

// Bounds: the hook input (hook.MaxBody) and each file read.
const maxInput = hook.MaxBody

const exitBlock = 2

type localFlags struct {
	timeout int
	hookflags.Local
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = `ewp-hook-local: ewp-hook claude-code's local mode, which ewp-hook runs for --db.

  ewp-hook-local claude-code --db LEDGER --tools FILE --agent NAME [--policies FILE]
                             [--call-policies FILE] [--budgets FILE]
                             [--audit PATH] [--operator-keys FILE] [--timeout SECONDS]

Reads Claude Code's hook JSON on stdin, judges the call over the local
ledger and decision log with the manifest in --tools, for agent NAME (a
live agent of the log: ewp-audit agents add), records the decision and
prints Claude Code's answer. --policies, --call-policies and --budgets
are ewp-mcp's: edge policies, Cedar policies over the call, and budgets
counted in the decision log. Any failure exits 2 (a block). See
docs/hooks.md.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help" ||
		len(args) > 1 && args[0] == "claude-code" && (args[1] == "-h" || args[1] == "--help")) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if len(args) == 0 || args[0] != "claude-code" {
		return block(stderr, "usage: ewp-hook-local claude-code --db LEDGER --tools FILE --agent NAME [--policies FILE] [--call-policies FILE] [--budgets FILE] [--audit PATH] [--operator-keys FILE]")
	}
	var f localFlags
	fs := flag.NewFlagSet("ewp-hook-local claude-code", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.timeout, "timeout", 10, "")
	f.Register(fs)
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 || f.DB == "" || f.timeout <= 0 {
		return block(stderr, "usage: ewp-hook-local claude-code --db LEDGER --tools FILE --agent NAME [...]")
	}
	body, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil || len(body) > maxInput {
		return block(stderr, "the hook input is unreadable or over %d bytes", maxInput)
	}
	return local(f, body, stdout, stderr)
}

func block(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "ewp-hook: blocked: "+format+"\n", a...)
	return exitBlock
}

// local decides one hook call over a local ledger and decision log, as
// ewp-mcp --http --tools would: the agent is named by --agent and must
// be in the log's agent register (a revoked one is refused).
func local(f localFlags, body []byte, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(f.timeout)*time.Second)
	defer cancel()
	out, err := decideLocally(ctx, f, body)
	if err != nil {
		return block(stderr, "%s", termtext.Escape(err.Error()))
	}
	stdout.Write(out)
	return 0
}

func decideLocally(ctx context.Context, f localFlags, body []byte) ([]byte, error) {
	if f.Tools == "" || f.Agent == "" {
		return nil, errors.New("with --db, --tools FILE and --agent NAME are required")
	}
	ledger, err := store.Open(ctx, f.DB, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	defer ledger.Close()
	log, err := auditstore.Open(ctx, f.DB, f.Audit, auditstore.Options{Create: !auditstore.IsPostgres(f.DB)})
	if err != nil {
		return nil, fmt.Errorf("the decision log: %w", err)
	}
	defer log.Close()
	caller, err := localAgent(ctx, log, f.Agent)
	if err != nil {
		return nil, err
	}
	g, m, err := localGate(ctx, f, ledger, log)
	if err != nil {
		return nil, err
	}
	j := &hook.GateJudge{Gate: g, Describe: hook.ManifestDescribe(m), Log: log}
	return hook.ClaudeCode(ctx, j, caller, body, approveWhere(f))
}

// approveWhere is where the answer says an operator approves: the log's
// flag for ewp-audit. It is shown to the agent and the person at the
// keyboard, so a database URL's password never is.
func approveWhere(f localFlags) hook.Where {
	if f.Audit != "" {
		return hook.Where{DB: "--audit " + pgurl.Redact(f.Audit)}
	}
	return hook.Where{DB: "--db " + pgurl.Redact(f.DB)}
}

// localAgent is the registered, live agent NAME.
func localAgent(ctx context.Context, log audit.Log, name string) (hook.Caller, error) {
	rec, err := identity.AgentNamed(ctx, identity.AgentsOf(log), name) // a revoked agent is refused there
	if err != nil {
		return hook.Caller{}, fmt.Errorf("--agent %s: %w", name, err)
	}
	p := rec.Principal()
	return hook.Caller{Principal: p, Credential: identity.Identity{Principal: p, Credential: identity.CredentialAgent}.Record(), Transport: "stdio"}, nil
}

// localGate is the gate over the ledger (with its concept graph and the
// --policies edge policies) and the log, and the --tools manifest.
func localGate(ctx context.Context, f localFlags, ledger store.Ledger, log audit.Log) (*gate.Gate, *manifest.Manifest, error) {
	raw, _, err := opfile.Read(f.Tools, opfile.MaxPolicyBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("--tools: %w", err)
	}
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("--tools %s: %w", f.Tools, err)
	}
	cfg := gate.Config{Ledger: ledger, Log: log, Logger: slog.New(slog.DiscardHandler)}
	var set *edgepolicy.Set
	if f.Policies != "" {
		src, _, err := opfile.Read(f.Policies, opfile.MaxPolicyBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("--policies: %w", err)
		}
		if set, err = edgepolicy.Load(f.Policies, src); err != nil {
			return nil, nil, fmt.Errorf("--policies %s: %w", f.Policies, err)
		}
		sum := sha256.Sum256(src)
		cfg.PolicySetHash = hex.EncodeToString(sum[:])
	}
	cfg.Guard = gate.NewGuard(graphstore.New(ledger, nil), set, func() *slog.Logger { return cfg.Logger })
	// The operator's layers after the guard's, as ewp-mcp orders them.
	built, err := policylayers.Build(policylayers.Files{CallPolicies: f.CallPolicies, Budgets: f.Budgets}, log, nil)
	if err != nil {
		return nil, nil, err
	}
	cfg.Layers = append(cfg.Guard.Layers(), built.Layers...)
	if f.OperatorKeys != "" {
		if cfg.OperatorKeys, err = audit.LoadOperatorKeys(f.OperatorKeys); err != nil {
			return nil, nil, fmt.Errorf("--operator-keys: %w", err)
		}
	}
	g, err := gate.New(cfg)
	return g, m, err
}
