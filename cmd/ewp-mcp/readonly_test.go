package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/syncbuf"
)

// makeReadOnly leaves path and its directory unwritable for this process:
// modes 0444/0555, and for root, whom modes do not stop, the immutable
// attribute (chattr +i), which stops root too. Both are undone at cleanup
// so the temporary directory can be removed.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	dir := filepath.Dir(path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755); _ = os.Chmod(path, 0o644) })
	if os.Geteuid() != 0 {
		return
	}
	for _, p := range []string{path, dir} {
		if out, err := exec.Command("chattr", "+i", p).CombinedOutput(); err != nil {
			t.Skipf("running as root, and chattr +i failed (%v: %s): this file system cannot be made read-only for root here", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", p).Run() })
	}
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		t.Fatal("the directory is still writable")
	}
}

// An evaluate-only server serves a ledger on read-only storage (no
// permission to write the file or create the WAL index beside it): it
// opens the ledger read-only and never needs to write.
func TestServesLedgerOnReadOnlyStorage(t *testing.T) {
	db := seededLedger(t)
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + side); err == nil {
			t.Fatalf("%s%s left behind by closing the ledger", db, side)
		}
	}
	makeReadOnly(t, db)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_propositions","arguments":{}}}`
	// The decision log is written, so it lives on writable storage: the
	// operator names it, or turns it off.
	for _, audit := range []string{filepath.Join(t.TempDir(), "decisions.audit"), "off"} {
		var out, errb syncbuf.Buffer
		code := run(context.Background(), []string{"--db", db, "--audit", audit}, env(), strings.NewReader(list+"\n"), &out, &errb, openStore)
		if code != 0 || !strings.Contains(out.String(), `\"proposition_id\":\"P\"`) {
			t.Fatalf("--audit %s: exit %d, stdout %s, stderr %s", audit, code, out.String(), errb.String())
		}
	}
	// Left to its default beside the read-only ledger, the log cannot be
	// created: the server says so and what to do, rather than run unrecorded.
	var out, errb syncbuf.Buffer
	code := run(context.Background(), []string{"--db", db}, env(), strings.NewReader(list+"\n"), &out, &errb, openStore)
	if code == 0 || !strings.Contains(errb.String(), "--audit") {
		t.Fatalf("default log beside a read-only ledger: exit %d, stderr %s", code, errb.String())
	}
}
