package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
)

// testOperators are the operators whose keys the test servers trust.
var testOperators = []string{"alice", "bob", "carol", "console"}

// keysFile writes an operator keys file trusting the test operators, for
// ewp-mcp --operator-keys.
func keysFile(t testing.TB) string {
	t.Helper()
	var ops []*audittest.Operator
	for _, name := range testOperators {
		ops = append(ops, audittest.NewOperator(name))
	}
	return audittest.KeysFile(t, t.TempDir(), ops...)
}

// opKey writes test operator name's private key file (0600), for
// ewp-audit approve --key and ewp-mcp --console-key.
func opKey(t testing.TB, name string) string {
	t.Helper()
	return audittest.NewOperator(name).KeyFile(t, filepath.Join(t.TempDir(), "keys"))
}

// TestDemoMakesItsKeyPair: --demo makes a key pair in its own directory,
// trusts it beside any --operator-keys, and gives it to the console, so
// the demo's approval loop works with no key set up.
func TestDemoMakesItsKeyPair(t *testing.T) {
	dir := t.TempDir()
	cfg := config{operatorKeys: keysFile(t)}
	if err := demoKeys(&cfg, dir, true); err != nil {
		t.Fatal(err)
	}
	if cfg.consoleKey != filepath.Join(dir, "operator.key") || cfg.operatorKeys != filepath.Join(dir, "operator-keys") {
		t.Fatalf("config after demoKeys: %+v", cfg)
	}
	signer, err := audit.LoadSigner(cfg.consoleKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := audit.LoadOperatorKeys(cfg.operatorKeys)
	if err != nil || keys.Len() != len(testOperators)+1 {
		t.Fatalf("the demo's keys file: %v (%d keys)", err, keys.Len())
	}
	a := &audit.Approval{DecisionID: "d", Verdict: audit.Approved, Once: true}
	if err := signer.Sign(a, &audit.Decision{ID: "d"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Verify(a); err != nil {
		t.Fatalf("the demo does not trust its own key: %v", err)
	}
	kept := config{consoleKey: "/elsewhere/console.key"}
	if err := demoKeys(&kept, t.TempDir(), true); err != nil || kept.consoleKey != "/elsewhere/console.key" {
		t.Fatalf("--console-key given with --demo was replaced: %v %+v", err, kept)
	}
}

// TestKeyFlagsRefused: a console key on stdio (where the server runs as
// the agent's OS user), a console key with no console, and an operator
// keys file with a bad line are refused before serving, naming the rule.
func TestKeyFlagsRefused(t *testing.T) {
	db := ledgerFile(t)
	bad := filepath.Join(t.TempDir(), "operator-keys")
	if err := os.WriteFile(bad, []byte("# keys\ned25519 not-base64 alice\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		env  func(string) string
		want string
	}{
		{[]string{"--db", db, "--console-key", opKey(t, "console")}, env(), "agent's OS user"},
		{[]string{"--db", db, "--http", "127.0.0.1:0", "--console-key", opKey(t, "console")}, env(), "no console is served"},
		{[]string{"--db", db, "--operator-keys", bad}, env(), "line 2"},
		{[]string{"--db", db, "--http", "127.0.0.1:0", "--console-key", opKey(t, "mallory"), "--operator-keys", keysFile(t)},
			env("EWP_OPERATOR_TOKEN", "operator-token-of-32-bytes-or-so"), "is not in --operator-keys"},
	}
	for _, c := range cases {
		r := runWith(t, c.args, c.env, "")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q lacks %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
