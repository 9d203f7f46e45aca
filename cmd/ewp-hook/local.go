package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/manifest"
	"github.com/ewp-go/ewp/store"
)

// maxFileBytes bounds each file the local mode reads (manifest, policies).
const maxFileBytes = 4 << 20

// local decides one hook call over a local ledger and decision log, as
// ewp-mcp --http --tools would: the agent is named by --agent and must
// be in the log's agent register (a revoked one is refused).
func local(f forwardFlags, body []byte, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(f.timeout)*time.Second)
	defer cancel()
	out, err := decideLocally(ctx, f, body)
	if err != nil {
		return block(stderr, "%s", termtext.Escape(err.Error()))
	}
	stdout.Write(out)
	return exitOK
}

func decideLocally(ctx context.Context, f forwardFlags, body []byte) ([]byte, error) {
	if f.tools == "" || f.agent == "" {
		return nil, errors.New("with --db, --tools FILE and --agent NAME are required")
	}
	ledger, err := store.Open(ctx, f.db, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	defer ledger.Close()
	log, err := auditstore.Open(ctx, f.db, f.audit, auditstore.Options{Create: !auditstore.IsPostgres(f.db)})
	if err != nil {
		return nil, fmt.Errorf("the decision log: %w", err)
	}
	defer log.Close()
	caller, err := localAgent(ctx, log, f.agent)
	if err != nil {
		return nil, err
	}
	g, m, err := localGate(ctx, f, ledger, log)
	if err != nil {
		return nil, err
	}
	j := &hook.GateJudge{Gate: g, Describe: hook.ManifestDescribe(m), Log: log}
	where := hook.Where{DB: "--db " + f.db}
	if f.audit != "" {
		where.DB = "--audit " + f.audit
	}
	return hook.ClaudeCode(ctx, j, caller, body, where)
}

// localAgent is the registered, live agent NAME.
func localAgent(ctx context.Context, log audit.Log, name string) (hook.Caller, error) {
	agents, ok := log.(audit.Agents)
	if !ok {
		return hook.Caller{}, errors.New("this decision log keeps no agents")
	}
	rec, err := identity.AgentNamed(ctx, agents, name)
	if err != nil {
		return hook.Caller{}, fmt.Errorf("--agent %s: %w", name, err)
	}
	if !rec.RevokedAt.IsZero() {
		return hook.Caller{}, fmt.Errorf("--agent %s: revoked at %s", name, rec.RevokedAt.Format(time.RFC3339))
	}
	return hook.Caller{Principal: rec.Principal(), Credential: identity.CredentialAgent + ":" + name, Transport: "stdio"}, nil
}

// localGate is the gate over the ledger (with its concept graph and the
// --policies edge policies) and the log, and the --tools manifest.
func localGate(ctx context.Context, f forwardFlags, ledger store.Ledger, log audit.Log) (*gate.Gate, *manifest.Manifest, error) {
	raw, err := readLimited(f.tools)
	if err != nil {
		return nil, nil, fmt.Errorf("--tools: %w", err)
	}
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("--tools %s: %w", f.tools, err)
	}
	cfg := gate.Config{Ledger: ledger, Log: log, Logger: slog.New(slog.DiscardHandler)}
	var set *edgepolicy.Set
	if f.policies != "" {
		src, err := readLimited(f.policies)
		if err != nil {
			return nil, nil, fmt.Errorf("--policies: %w", err)
		}
		if set, err = edgepolicy.Load(f.policies, src); err != nil {
			return nil, nil, fmt.Errorf("--policies %s: %w", f.policies, err)
		}
		sum := sha256.Sum256(src)
		cfg.PolicySetHash = hex.EncodeToString(sum[:])
	}
	cfg.Guard = gate.NewGuard(graphstore.New(ledger, nil), set, func() *slog.Logger { return cfg.Logger })
	cfg.Layers = cfg.Guard.Layers()
	if f.operatorKeys != "" {
		if cfg.OperatorKeys, err = audit.LoadOperatorKeys(f.operatorKeys); err != nil {
			return nil, nil, fmt.Errorf("--operator-keys: %w", err)
		}
	}
	g, err := gate.New(cfg)
	return g, m, err
}

func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err == nil && len(b) > maxFileBytes {
		err = fmt.Errorf("%s is over the limit of %d bytes", path, maxFileBytes)
	}
	return b, err
}
