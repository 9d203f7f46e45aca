package main

import (
	"log/slog"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/policylayers"
	"github.com/ewp-go/ewp/mcp"
)

// policyLayerOptions installs the call_policies and budget layers of
// --call-policies and --budgets after the guard's. The budget layer keeps
// its counts in the decision log l (nil with --audit off, which --budgets
// refuses).
func policyLayerOptions(cfg config, l audit.Log, log *slog.Logger) ([]mcp.Option, error) {
	b, err := policylayers.Build(policylayers.Files{CallPolicies: cfg.callPolicies, Budgets: cfg.budgets}, l, nil)
	if err != nil {
		return nil, err
	}
	if b.CallPolicies != nil {
		log.Info("call policies ready", "call_policies", cfg.callPolicies, "policy_ids", b.CallPolicies.IDs())
	}
	if b.Budgets != nil {
		log.Info("budgets ready", "budgets", cfg.budgets, "agents", len(b.Budgets.Agents), "groups", len(b.Budgets.Groups),
			"default", b.Budgets.Default != nil)
	}
	opts := make([]mcp.Option, len(b.Layers))
	for i, layer := range b.Layers {
		opts[i] = mcp.WithGateLayer(layer)
	}
	return opts, nil
}
