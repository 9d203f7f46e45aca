package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/internal/policylayers"
	"github.com/ewp-go/ewp/store"
)

// backend is what the gate stands on: the ledger, the decision log, the
// concept graph and the operator's policies and keys, as the config
// names them (the same files and databases ewp-mcp serves).
type backend struct {
	gate   *gate.Gate
	log    audit.Log // nil with "audit": "off"
	closes []func()
}

func (b *backend) close() {
	for i := len(b.closes) - 1; i >= 0; i-- {
		b.closes[i]()
	}
}

// openBackend opens what cfg names and builds the gate over it. The
// ledger is opened read-only and must exist: the gateway never writes
// evidence.
func openBackend(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *backend, err error) {
	b := &backend{}
	if cfg.Budgets != "" && cfg.Audit == "" {
		return nil, fmt.Errorf(`%s: "budgets" keep their counts in the decision log; they need one ("audit" is "off")`, cfg.Path)
	}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if !store.IsPostgres(cfg.DB) {
		if _, serr := os.Stat(cfg.DB); serr != nil {
			return nil, fmt.Errorf("ledger not found: %s (db in %s; create it with ewp-ingest): %w", cfg.DB, cfg.Path, serr)
		}
	}
	l, err := store.Open(ctx, cfg.DB, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", pgurl.Redact(cfg.DB), err)
	}
	b.closes = append(b.closes, func() { _ = l.Close() })
	guard, policyHash, err := openGuard(ctx, cfg, graphstore.New(l, nil), log)
	if err != nil {
		return nil, err
	}
	gc := gate.Config{Ledger: l, Layers: guard.Layers(), Guard: guard, PolicySetHash: policyHash, Logger: log,
		LogOff: `"audit": "off" in ` + cfg.Path}
	if cfg.Audit != "" {
		if b.log, err = auditstore.Open(ctx, "", cfg.Audit, auditstore.Options{Create: !auditstore.IsPostgres(cfg.Audit)}); err != nil {
			return nil, fmt.Errorf("open decision log %s (audit in %s): %w", pgurl.Redact(cfg.Audit), cfg.Path, err)
		}
		b.closes = append(b.closes, func() { _ = b.log.Close() })
		gc.Log = b.log
		log.Info("decision log ready", "audit", pgurl.Redact(cfg.Audit))
	} else {
		log.Warn(`running without a decision log ("audit": "off"): nothing is recorded and no call can be approved`)
	}
	more, err := policyLayers(cfg, b.log, log)
	if err != nil {
		return nil, err
	}
	gc.Layers = append(gc.Layers, more...)
	if gc.OperatorKeys, err = operatorKeys(cfg, log); err != nil {
		return nil, err
	}
	if b.gate, err = gate.New(gc); err != nil {
		return nil, err
	}
	return b, nil
}

// openGuard is the grounding guard over the ledger's concept graph with
// the operator's edge policies; every placement must sit on an edge of
// the graph (as ewp-mcp refuses to start otherwise).
func openGuard(ctx context.Context, cfg *config.Config, gs *graphstore.Store, log *slog.Logger) (*gate.Guard, string, error) {
	if cfg.Graph != "" {
		return nil, "", errors.New(`"graph": a graph file is not read by the gateway yet; ingest it into the ledger (ewp-ingest --db LEDGER GRAPH.json) and leave "graph" out`)
	}
	g, version, err := gs.Graph(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("loading the concept graph: %w", err)
	}
	var set *edgepolicy.Set
	var hash string
	if cfg.Policies != "" {
		src, _, err := opfile.Read(cfg.Policies, opfile.MaxPolicyBytes)
		if err != nil {
			return nil, "", fmt.Errorf(`"policies": %w`, err)
		}
		if set, err = edgepolicy.Load(cfg.Policies, src); err != nil {
			return nil, "", fmt.Errorf("%s: the policy file is not valid:\n%w", cfg.Policies, err)
		}
		if orphans := set.Validate(g); len(orphans) > 0 {
			return nil, "", fmt.Errorf("%s: %d edge-policy placement(s) have no APPLIES_TO edge in the concept graph (version %d):\n%s",
				cfg.Policies, len(orphans), version, edgepolicy.FormatOrphans(orphans))
		}
		sum := sha256.Sum256(src)
		hash = hex.EncodeToString(sum[:])
	}
	log.Info("grounding guard ready", "concepts", g.Len(), "graph_version", version, "policies", cfg.Policies, "policy_set_hash", hash)
	return gate.NewGuard(gs, set, func() *slog.Logger { return log }), hash, nil
}

// policyLayers are the call_policies and budget layers of the config's
// files, to run after the guard's (as ewp-mcp's --call-policies and
// --budgets). The budgets count in the decision log l.
func policyLayers(cfg *config.Config, l audit.Log, log *slog.Logger) ([]gate.Layer, error) {
	built, err := policylayers.Build(policylayers.Files{CallPolicies: cfg.CallPolicies, Budgets: cfg.Budgets}, l, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if built.CallPolicies != nil {
		log.Info("call policies ready", "call_policies", cfg.CallPolicies, "policy_ids", built.CallPolicies.IDs())
	}
	if built.Budgets != nil {
		log.Info("budgets ready", "budgets", cfg.Budgets, "agents", len(built.Budgets.Agents), "groups", len(built.Budgets.Groups),
			"default", built.Budgets.Default != nil)
	}
	return built.Layers, nil
}

func operatorKeys(cfg *config.Config, log *slog.Logger) (*audit.OperatorKeys, error) {
	if cfg.OperatorKeys == "" {
		log.Warn(`no operator keys ("operator_keys" in the config): every approval is refused; make a key with ewp-audit keygen and list its public line there`)
		return nil, nil
	}
	keys, err := audit.LoadOperatorKeys(cfg.OperatorKeys)
	if err != nil {
		return nil, fmt.Errorf(`"operator_keys": %w`, err)
	}
	return keys, nil
}
