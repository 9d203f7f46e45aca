package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
)

// TestKeygen: keygen writes a private key readable by its owner alone
// (by default ~/.ewp/operator.key, its directory 0700), prints the public
// line for the server's keys file and never the private key, refuses to
// replace a key, and approve signs with it by default.
func TestKeygen(t *testing.T) {
	out, _ := wantExit(t, exitOK, "keygen", "--name", "dana")
	path := filepath.Join(home, ".ewp", "operator.key")
	t.Cleanup(func() { os.RemoveAll(filepath.Join(home, ".ewp")) })
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v", fi, err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("~/.ewp mode %v", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ed25519 ") {
			line = l
		}
	}
	keys, err := audit.ParseOperatorKeys(strings.NewReader(line), "printed")
	if err != nil || keys.Len() != 1 || !strings.HasSuffix(line, " dana") {
		t.Fatalf("the printed public line %q: %v", line, err)
	}
	for _, f := range strings.Fields(string(raw)) {
		if len(f) > 20 && strings.Contains(out, f) {
			t.Fatal("keygen printed the private key")
		}
	}
	_, errs := wantExit(t, exitLog, "keygen", "--name", "dana")
	if !strings.Contains(errs, "already exists") {
		t.Errorf("a second keygen: %s", errs)
	}
	db, ds := seeded(t, pending("P-db", 1))
	out, _ = wantExit(t, exitOK, "approve", "--db", db, ds[0].ID, "--once", "--json")
	if !strings.Contains(out, `"approver": "dana"`) || !strings.Contains(out, `"signature"`) {
		t.Errorf("approve with the default key: %s", out)
	}
}
