package main

import (
	"database/sql"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/ledger"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to damage a PostgreSQL ledger
)

// headOf reads the chain head of the ledger at db.
func headOf(t *testing.T, db string) ledger.Head {
	t.Helper()
	l, err := openReader(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestVerifyHeadFlag(t *testing.T) { eachStore(t, testVerifyHeadFlag) }

func testVerifyHeadFlag(t *testing.T, kind string) {
	db := freshDB(t, kind)
	runCLI(t, view("P-v", "v1", "extract"), "--db", db, "-")
	runCLI(t, view("P-w", "v1", "extract"), "--db", db, "-")
	h := headOf(t, db)

	code, out, errs := runCLI(t, "", "verify", "--db", db, "--head", h.String())
	if code != ingest.ExitOK || !strings.Contains(out, "head "+h.String()) || !strings.Contains(out, "holds the kept head") {
		t.Fatalf("matching head: exit %d %s %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "verify", "--db", db, "--json")
	var rep struct {
		OK   bool
		Head ledger.Head
	}
	if err := json.Unmarshal([]byte(out), &rep); code != ingest.ExitOK || err != nil || !rep.OK || rep.Head != h {
		t.Fatalf("--json: exit %d %s (%v)", code, out, err)
	}

	wrong := h
	wrong.Hash = strings.Repeat("ab", 32)
	code, _, errs = runCLI(t, "", "verify", "--db", db, "--head", wrong.String())
	if code != ingest.ExitBroken || !strings.Contains(errs, "does not match") {
		t.Fatalf("wrong hash: exit %d %s", code, errs)
	}
	beyond := ledger.Head{Seq: h.Seq + 1, Hash: h.Hash}
	code, out, _ = runCLI(t, "", "verify", "--db", db, "--head", beyond.String(), "--json")
	if code != ingest.ExitBroken || !strings.Contains(out, "cut off") || !strings.Contains(out, `"held": false`) {
		t.Fatalf("seq beyond the end (truncated ledger): exit %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "", "verify", "--db", db, "--head", "7"); code != ingest.ExitUsage || !strings.Contains(errs, "SEQ:HASH") {
		t.Fatalf("malformed head: exit %d %s", code, errs)
	}
}

// ewp-ingest refuses to extend a chain broken at its tail, and points the
// operator at verify.
func TestIngestRefusesBrokenChain(t *testing.T) { eachStore(t, testIngestRefusesBrokenChain) }

func testIngestRefusesBrokenChain(t *testing.T, kind string) {
	db := freshDB(t, kind)
	if code, _, errs := runCLI(t, view("P-v", "v1", "extract"), "--db", db, "-"); code != ingest.ExitOK {
		t.Fatalf("first load: exit %d %s", code, errs)
	}
	driver, source, damage := "sqlite", "file:"+db, []string{`DROP TRIGGER events_no_UPDATE`, `UPDATE events SET payload = replace(payload, 'P-v', 'P-x')`}
	if kind == "postgres" {
		driver, source, damage = "pgx", db, []string{`DROP TRIGGER events_no_change ON events`, `UPDATE events SET payload = replace(payload, 'P-v', 'P-x')`}
	}
	raw, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range damage {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	before := headOf(t, db)
	code, _, errs := runCLI(t, view("P-w", "v1", "extract"), "--db", db, "-")
	if code == ingest.ExitOK || !strings.Contains(errs, "ewp-ingest verify") {
		t.Fatalf("load onto a broken chain: exit %d %s", code, errs)
	}
	if after := headOf(t, db); after != before {
		t.Fatalf("the broken chain was extended: %v -> %v", before, after)
	}
}

// verify works on a ledger this process cannot write (immutable file and
// directory: the -shm index cannot be created beside it). SQLite only: it
// is about a ledger file's storage; a PostgreSQL reader's rights are the
// server's (TestPostgresWriterLogin, ledger/postgres's role tests).
func TestVerifyReadOnlyStorage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ewp.db")
	runCLI(t, view("P-v", "v1", "extract"), "--db", db, "-")
	if out, err := exec.Command("chattr", "+i", db, dir).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED LOUDLY: chattr +i failed (%v %s); needs root on a Linux file system — verify on read-only storage is untested here", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir, db).Run() })
	code, out, errs := runCLI(t, "", "verify", "--db", db)
	if code != ingest.ExitOK || !strings.Contains(out, "ok: checked 1 event") {
		t.Fatalf("verify on read-only storage: exit %d %s %s", code, out, errs)
	}
}
