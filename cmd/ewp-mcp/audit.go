package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	auditpg "github.com/ewp-go/ewp/audit/postgres"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/mcp"
)

// auditOff is the --audit value that runs without a decision log.
const auditOff = "off"

// defaultAuditPath is where the decision log lives when --audit is not
// given: beside the ledger, so ewp-audit --db finds the same one (in the
// same database for a postgres:// ledger).
func defaultAuditPath(ledgerPath string) string {
	if auditstore.IsPostgres(ledgerPath) {
		return ledgerPath
	}
	return auditsqlite.DefaultPath(ledgerPath)
}

// auditPath is the decision log cfg asks for; "" when it is off.
func auditPath(cfg config) string {
	switch cfg.audit {
	case auditOff:
		return ""
	case "":
		return defaultAuditPath(cfg.db)
	}
	return cfg.audit
}

// openDecisionLog opens the decision log at path. It is a variable only so
// the tests can share one log between the server and the operator's side
// of the loop within one process.
var openDecisionLog = openAuditStore

// openAuditStore opens the durable decision log at path, creating an
// SQLite one on first use: the server is the log's only writer of
// decisions, so unlike the read-only ledger it must be able to start one.
// In PostgreSQL the log is made by ewp-ingest init, as a replica's role
// may not create schemas.
// pg sizes a PostgreSQL log's pool and bounds its statements and
// connects as the ledger's (pgSettings).
func openAuditStore(path string, pg auditpg.Options, _ *slog.Logger) (audit.Log, error) {
	return auditstore.Open(context.Background(), "", path, auditstore.Options{Create: !auditstore.IsPostgres(path), Postgres: pg})
}

// decisionLogOption opens the decision log cfg asks for and returns the
// server option and a close; nil option when --audit off. --demo's log
// is the SQLite store beside its ledger, in the demo's directory.
// policyHash is the hash of the policies the guard loaded (guardOption),
// recorded with every decision.
func decisionLogOption(cfg config, policyHash string, log *slog.Logger) (mcp.Option, *mcp.DecisionLog, func(), error) {
	path := auditPath(cfg)
	if path == "" {
		log.Warn("running without a decision log (--audit off): decisions are not recorded and approvals are disabled")
		return nil, nil, func() {}, nil
	}
	l, err := openDecisionLog(path, auditpg.Options{Settings: pgSettings(cfg)}, log)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open decision log %s (name one on writable storage with --audit PATH, or run without decisions on record with --audit off): %w", pgurl.Redact(path), err)
	}
	log.Info("decision log ready", "audit", pgurl.Redact(path))
	notifying, err := withNotifications(cfg.notify, l, log)
	if err != nil {
		_ = l.Close()
		return nil, nil, nil, err
	}
	l = notifying
	keys, err := operatorKeys(cfg, log)
	if err != nil {
		_ = l.Close()
		return nil, nil, nil, err
	}
	dl := mcp.DecisionLog{Log: l, PolicySetHash: policyHash, OperatorKeys: keys,
		MaxApprovalLifetime: cfg.approvalMaxLifetime, ReplayWindow: cfg.replayWindow, RedactArguments: cfg.redact}
	if auditstore.IsPostgres(path) {
		dl.Unavailable = postgres.IsUnavailable
	}
	return mcp.WithDecisionLog(dl), &dl, func() { _ = l.Close() }, nil
}

// operatorKeys loads the operator public keys the gate verifies approvals
// with; nil (every approval refused, with a warning) when none are given.
func operatorKeys(cfg config, log *slog.Logger) (*audit.OperatorKeys, error) {
	if cfg.operatorKeys == "" {
		log.Warn("no operator keys (--operator-keys FILE): every approval is refused; make a key with ewp-audit keygen and list its public line there")
		return nil, nil
	}
	keys, err := audit.LoadOperatorKeys(cfg.operatorKeys)
	if err != nil {
		return nil, fmt.Errorf("--operator-keys: %w", err)
	}
	log.Info("operator keys loaded", "operator_keys", cfg.operatorKeys, "keys", keys.Len())
	return keys, nil
}
