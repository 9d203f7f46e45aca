package main

import (
	"path/filepath"
	"testing"

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
