package store_test

import (
	"context"
	"testing"

	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/store"
)

// TestCreateMakesTheDecisionLog: creating a PostgreSQL ledger (ewp-ingest
// with a postgres:// --db) also makes the decision log's schema in the
// same database, so ewp-mcp replicas, whose roles may not create it, find
// it there.
func TestCreateMakesTheDecisionLog(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	if _, err := auditpg.Open(ctx, url, auditpg.Options{}); err == nil {
		t.Fatal("a fresh database has a decision log")
	}
	l, err := store.Open(ctx, url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	log, err := auditpg.Open(ctx, url, auditpg.Options{})
	if err != nil {
		t.Fatalf("after creating the ledger: %v", err)
	}
	log.Close()
}
