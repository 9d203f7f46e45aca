package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/opfile"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/mcp"
)

// grapher is a store that also holds a concept graph (the ledger does;
// test fakes need not).
type grapher interface {
	graph() *graphstore.Store
}

func (s ledgerStore) graph() *graphstore.Store { return graphstore.New(s.l, nil) }

// guardOption installs the grounding guard over the store's concept graph.
// The graph must load, and every policy placement must sit on an APPLIES_TO
// edge of it: a policy that can never fire is almost always a typo or a
// graph that moved on, so the server refuses to start rather than run
// without the protection the operator believes is there. policyHash is
// the sha256 of the policy bytes the guard loaded ("" without policies),
// which every decision records: hashing what was loaded, not the file
// read again, keeps the record true when the file changes meanwhile.
func guardOption(ctx context.Context, cfg config, store mcp.Store, log *slog.Logger) (_ mcp.Option, policyHash string, _ error) {
	gr, ok := store.(grapher)
	if !ok {
		if cfg.policies != "" {
			return nil, "", errors.New("--policies needs a ledger that holds a concept graph")
		}
		return nil, "", nil
	}
	gs := gr.graph()
	g, version, err := gs.Graph(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("loading the concept graph: %w", err)
	}
	guard := mcp.Guard{Graph: gs}
	if guard.Policies, policyHash, err = loadPolicies(cfg); err != nil {
		return nil, "", err
	}
	if guard.Policies != nil {
		if orphans := guard.Policies.Validate(g); len(orphans) > 0 {
			return nil, "", fmt.Errorf("%s: %d edge-policy placement(s) have no APPLIES_TO edge in the concept graph (version %d); "+
				"fix the annotations or ingest the graph that has these edges:\n%s",
				policyName(cfg), len(orphans), version, edgepolicy.FormatOrphans(orphans))
		}
	}
	if g.Len() == 0 {
		log.Warn(emptyGraphWarning(cfg), "concepts", 0, "graph_version", version,
			"policies", policyName(cfg), "policy_ids", policyIDs(guard.Policies), "policy_set_hash", policyHash)
	} else {
		log.Info("grounding guard ready", "concepts", g.Len(), "graph_version", version,
			"policies", policyName(cfg), "policy_ids", policyIDs(guard.Policies), "policy_set_hash", policyHash)
	}
	return mcp.WithGuard(guard), policyHash, nil
}

// emptyGraphWarning says that a guard over an empty concept graph guards
// nothing, and how to give it a graph: "ready" would promise a protection
// that is not there.
func emptyGraphWarning(cfg config) string {
	return "grounding guard guards nothing: the ledger holds no concept graph, so every concept an agent names is unknown. " +
		"Load one with `ewp-ingest --db " + pgurl.Redact(cfg.db) + " GRAPH.json` (fixtures/graphs/filesystem-demo.json is an example); " +
		"the guard reads it on its next call, no restart needed"
}

// loadPolicies reads --policies, or the embedded demo policies with --demo,
// and returns the set with the sha256 (hex) of the bytes it was read from.
func loadPolicies(cfg config) (*edgepolicy.Set, string, error) {
	var src []byte
	switch {
	case cfg.policies != "":
		b, _, err := opfile.Read(cfg.policies, opfile.MaxPolicyBytes)
		if err != nil {
			return nil, "", fmt.Errorf("--policies: %w", err)
		}
		src = b
	case cfg.demo:
		src = fixtures.DemoPolicies
	default:
		return nil, "", nil
	}
	set, err := edgepolicy.Load(policyName(cfg), src)
	if err != nil {
		return nil, "", fmt.Errorf("%s: the policy file is not valid:\n%w", policyName(cfg), err)
	}
	sum := sha256.Sum256(src)
	return set, hex.EncodeToString(sum[:]), nil
}

func policyName(cfg config) string {
	switch {
	case cfg.policies != "":
		return cfg.policies
	case cfg.demo:
		return "filesystem-demo.cedar (embedded demo)"
	}
	return "none"
}

func policyIDs(s *edgepolicy.Set) []string {
	if s == nil {
		return []string{}
	}
	return s.IDs()
}
