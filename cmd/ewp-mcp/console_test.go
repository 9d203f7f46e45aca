package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The operator token follows the ingest token's rules (never on the
// command line, whitespace refused, short warned, not both sources), is
// for --http only, and is never the agent's ingest token.
func TestOperatorTokenConfig(t *testing.T) {
	db := ledgerFile(t)
	http := []string{"--db", db, "--http", "127.0.0.1:0"}
	strong := "0123456789abcdef-operator"
	file := filepath.Join(t.TempDir(), "operator")
	_ = os.WriteFile(file, []byte(strong+"\n"), 0o600)
	refused := []struct {
		args []string
		env  func(string) string
		want []string
	}{
		{append(http, "--operator-token", strong), env(), []string{"visible to every user", "EWP_OPERATOR_TOKEN", "--operator-token-file"}},
		{append(http, "--operator-token="+strong), env(), []string{"visible to every user"}},
		{http, env("EWP_OPERATOR_TOKEN", " \t\n"), []string{"EWP_OPERATOR_TOKEN holds only whitespace"}},
		{append(http, "--operator-token-file", file), env("EWP_OPERATOR_TOKEN", strong), []string{"operator token is given twice"}},
		{http, env("EWP_OPERATOR_TOKEN", strong, "EWP_INGEST_TOKEN", strong), []string{"equals the ingest token", "approve its own actions"}},
		{append(append([]string{}, http...), "--operator-token-file", file), env("EWP_INGEST_TOKEN", strong), []string{"equals the ingest token"}},
		{[]string{"--db", db, "--operator-token-file", file}, env(), []string{"--operator-token-file is for --http"}},
	}
	for _, tc := range refused {
		_, err := parseConfig(tc.args, tc.env)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", tc.args, err, w)
			}
		}
	}
	blank := filepath.Join(t.TempDir(), "blank")
	_ = os.WriteFile(blank, []byte(" \n"), 0o600)
	if _, err := parseConfig(append(http, "--operator-token-file", blank), env()); err == nil || !strings.Contains(err.Error(), "only whitespace") {
		t.Errorf("whitespace token file: %v", err)
	}

	c, err := parseConfig(append(http, "--operator-token-file", file), env("EWP_INGEST_TOKEN", "another-token-0123456789"))
	if err != nil || c.operator != strong || c.token == c.operator || len(c.notes) != 0 {
		t.Errorf("token file: %+v %v", c, err)
	}
	c, err = parseConfig(http, env("EWP_OPERATOR_TOKEN", "short"))
	if err != nil || c.operator != "short" || len(c.notes) != 1 || !strings.Contains(c.notes[0], "operator token is only 5 bytes") || !strings.Contains(c.notes[0], "approve") {
		t.Errorf("short token: %+v %v", c.notes, err)
	}
	c, err = parseConfig([]string{"--db", db}, env("EWP_OPERATOR_TOKEN", strong))
	if err != nil || c.operator != "" || len(c.notes) != 1 || !strings.Contains(c.notes[0], "ignored on stdio") {
		t.Errorf("stdio: %+v %v", c, err)
	}
	if c, err := parseConfig(http, env()); err != nil || c.operator != "" {
		t.Errorf("no token, no console: %+v %v", c, err)
	}
}

// --help documents the console's credential.
func TestHelpDocumentsTheConsole(t *testing.T) {
	r := runWith(t, []string{"--help"}, env(), "")
	for _, w := range []string{"--operator-token-file", "EWP_OPERATOR_TOKEN", "/console/"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
}
