package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestPostgresLog: with --db postgres://… the commands work on the log in
// that database (schema ewp_audit), as on a file: the inbox, an approval,
// the trail, verify; a database without the log is an error, not a new
// log.
func TestPostgresLog(t *testing.T) {
	url := pgtest.DB(t)
	_, errs := wantExit(t, exitLog, "list", "--db", url)
	if !strings.Contains(errs, "ewp-ingest init") {
		t.Errorf("a database without the log: %s", errs)
	}
	l, err := auditstore.Open(context.Background(), url, "", auditstore.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d := pending("P-db", 1)
	if err := l.Record(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	l.Close()
	out, _ := wantExit(t, 0, "list", "--db", url, "--pending")
	if !strings.Contains(out, d.ID) || !strings.Contains(out, "pending") {
		t.Errorf("list --pending:\n%s", out)
	}
	out, _ = wantExit(t, 0, "approve", "--db", url, d.ID, "--once", "--key", opKey("alice"))
	if !strings.Contains(out, "approved decision "+d.ID) {
		t.Errorf("approve:\n%s", out)
	}
	out, _ = wantExit(t, 0, "show", "--db", url, d.ID)
	if !strings.Contains(out, "approved, once by alice") {
		t.Errorf("show:\n%s", out)
	}
	out, _ = wantExit(t, 0, "verify", "--db", url)
	if !strings.Contains(out, "ok: checked 2 events") {
		t.Errorf("verify:\n%s", out)
	}
}

// TestPostgresApproveNeedsTheOperatorRole: a login in the replicas' role
// (ewp_server) cannot store an approval, signed or not; a login in
// ewp_operator can.
func TestPostgresApproveNeedsTheOperatorRole(t *testing.T) {
	url := pgtest.DB(t)
	l, err := auditstore.Open(context.Background(), url, "", auditstore.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d1, d2 := pending("P-db", 1), pending("P-db", 2)
	for _, d := range []*audit.Decision{d1, d2} {
		if err := l.Record(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for _, q := range []string{
		`DO $$ BEGIN CREATE ROLE audit_cli_mcp LOGIN IN ROLE ewp_server; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_cli_op LOGIN IN ROLE ewp_operator; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
	} {
		if _, err := admin.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	_, errs := wantExit(t, exitLog, "approve", "--db", pgtest.WithUser(url, "audit_cli_mcp"), d1.ID, "--once", "--key", opKey("alice"))
	if !strings.Contains(errs, "permission denied") || !strings.Contains(errs, "member of ewp_operator") {
		t.Errorf("approve as the replicas' role: %s", errs)
	}
	out, _ := wantExit(t, exitOK, "approve", "--db", pgtest.WithUser(url, "audit_cli_op"), d2.ID, "--once", "--key", opKey("alice"))
	if !strings.Contains(out, "approved decision "+d2.ID) {
		t.Errorf("approve as an operator:\n%s", out)
	}
}
