package pgurl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPasswordOffTheCommandLine holds pgx (which every command hands its
// --db URL to) to the ways docs/scale-out.md documents of keeping a password off
// argv, where ps shows it: PGPASSWORD, a password file (PGPASSFILE) and a
// service file (PGSERVICEFILE with ?service=NAME).
func TestPasswordOffTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(pass, []byte("db:5432:ewp:mcp_eu1:from-passfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	service := filepath.Join(dir, "pg_service.conf")
	if err := os.WriteFile(service, []byte("[ewp]\nhost=db\nport=5432\ndbname=ewp\nuser=mcp_eu1\npassword=from-service\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSERVICE", "PGHOST", "PGUSER", "PGDATABASE", "PGPORT"} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
	t.Setenv("PGPASSFILE", pass)
	cfg, err := pgconn.ParseConfig("postgres://mcp_eu1@db:5432/ewp")
	if err != nil || cfg.Password != "from-passfile" {
		t.Fatalf("PGPASSFILE: password %q, %v", cfg.Password, err)
	}
	t.Setenv("PGPASSWORD", "from-env")
	if cfg, err = pgconn.ParseConfig("postgres://mcp_eu1@db:5432/ewp"); err != nil || cfg.Password != "from-env" {
		t.Fatalf("PGPASSWORD: password %q, %v", cfg.Password, err)
	}
	os.Unsetenv("PGPASSWORD")
	t.Setenv("PGSERVICEFILE", service)
	if cfg, err = pgconn.ParseConfig("postgres:///?service=ewp"); err != nil || cfg.Password != "from-service" || cfg.User != "mcp_eu1" || cfg.Host != "db" {
		t.Fatalf("service file: %+v, %v", cfg, err)
	}
}
