package main

import (
	"context"
	"os"
	"time"

	"encoding/json"
	"fmt"
	"github.com/jackc/pgx/v5"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestPostgresCommands: with --db postgres://… init makes the schemas and
// roles and says so, a second init finds them all; loading (a file, a
// stream with a refused view under --partial, a concept graph) and
// verify [--head] work as on a file; copy to SQLite and back ends with
// the same head, which verify confirms on every copy.
func TestPostgresCommands(t *testing.T) {
	url := pgtest.DB(t)
	code, out, errs := runCLI(t, "", "init", "--db", url)
	// The roles are the cluster's, not the database's: other tests of this
	// binary may have made them already.
	if code != 0 || strings.Count(out, "schema (tables, append-only triggers): created") != 1 ||
		strings.Count(out, "schema ewp_audit: created") != 1 || strings.Count(out, ": created")+strings.Count(out, ": already there") != 6 {
		t.Fatalf("first init: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "init", "--db", url)
	if code != 0 || strings.Count(out, ": already there") != 6 {
		t.Fatalf("second init: exit %d\n%s%s", code, out, errs)
	}
	dir := t.TempDir()
	f := writeFile(t, dir, "a.jsonl", view("P-a", "v1", "extract")+"\n"+view("P-b", "v1", "extract")+"\n")
	if code, out, errs := runCLI(t, "", "--db", url, f); code != 0 || !strings.Contains(out, "2 stored") {
		t.Fatalf("load a file: exit %d\n%s%s", code, out, errs)
	}
	stream := view("P-c", "v1", "extract") + "\n" + view("P-a", "v1", "tool") + "\n" + view("P-c", "v2", "extract") + "\n"
	code, out, errs = runCLI(t, stream, "--db", url, "--partial", "--json", "-")
	if code != ingest.ExitPartial || !strings.Contains(out, "EWP_REFUSE_UNATTESTED_TRUSTED_ORIGIN") || !strings.Contains(out, `"stored": 2`) {
		t.Fatalf("stream with a refusal: exit %d\n%s%s", code, out, errs)
	}
	// A password in the URL never reaches the report (the throwaway
	// cluster trusts local connections, so any password logs in).
	withPassword := strings.Replace(url, "://postgres@", "://postgres:hunter2@", 1)
	code, out, errs = runCLI(t, "", "--db", withPassword, f)
	if code != 0 || withPassword == url || strings.Contains(out+errs, "hunter2") {
		t.Fatalf("re-load with a password in the URL: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "verify", "--db", url, "--json")
	if code != 0 || !strings.Contains(out, `"events": 4`) {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	head := jsonHead(t, out)
	if code, out, errs := runCLI(t, "", "verify", "--db", url, "--head", head); code != 0 || !strings.Contains(out, "holds the kept head") {
		t.Fatalf("verify --head: exit %d\n%s%s", code, out, errs)
	}
	lite := filepath.Join(dir, "copy.db")
	code, out, errs = runCLI(t, "", "copy", "--from", url, "--to", lite)
	if code != 0 || !strings.Contains(out, "copied 4 events") || !strings.Contains(out, head) {
		t.Fatalf("copy to SQLite: exit %d\n%s%s", code, out, errs)
	}
	back := pgtest.DB(t)
	if code, out, errs := runCLI(t, "", "copy", "--from", lite, "--to", back); code != 0 || !strings.Contains(out, head) {
		t.Fatalf("copy back: exit %d\n%s%s", code, out, errs)
	}
	for _, db := range []string{lite, back} {
		if code, out, errs := runCLI(t, "", "verify", "--db", db, "--head", head); code != 0 {
			t.Fatalf("verify %s: exit %d\n%s%s", db, code, out, errs)
		}
	}
	if code, out, errs := runCLI(t, "", "init", "--db", lite); code != ingest.ExitOK || !strings.Contains(out, "already there") {
		t.Fatalf("init on an existing file: exit %d %s%s", code, out, errs)
	}
}

// jsonHead is the head in verify --json's output, as SEQ:HASH.
func jsonHead(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		Head struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		} `json:"head"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Head.Hash == "" {
		t.Fatalf("no head in %s (%v)", out, err)
	}
	return fmt.Sprintf("%d:%s", v.Head.Seq, v.Head.Hash)
}

// TestPostgresWriterLogin: after init (by the owner), a login in
// ewp_writer loads and verifies, as docs/scale-out.md tells operators to run
// their pipelines; it needs no right to create anything.
func TestPostgresWriterLogin(t *testing.T) {
	url := pgtest.DB(t)
	if code, out, errs := runCLI(t, "", "init", "--db", url); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errs)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	role := fmt.Sprintf("ingest_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := c.Exec(ctx, `CREATE ROLE `+role+` LOGIN IN ROLE ewp_writer`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = c.Exec(context.Background(), `DROP ROLE `+role)
	})
	writer := pgtest.WithUser(url, role)
	f := writeFile(t, t.TempDir(), "a.jsonl", view("P-w", "v1", "extract")+"\n")
	if code, out, errs := runCLI(t, "", "--db", writer, f); code != 0 {
		t.Fatalf("load as a writer login: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "", "verify", "--db", writer); code != 0 {
		t.Fatalf("verify as a writer login: exit %d\n%s%s", code, out, errs)
	}
}
