package main

import (
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestPasswordsNeverPrinted: a password in --db, in the user info or a
// query parameter, in a URL that parses or one that does not, appears in
// no output: not in errors, not in the "keep it: verify --db" hint.
func TestPasswordsNeverPrinted(t *testing.T) {
	t.Chdir(t.TempDir()) // a libpq string is a file name to ewp-ingest: any file it makes stays there
	in := writeFile(t, t.TempDir(), "v.json", view("P-1", "v1", "user_asserted"))
	for _, db := range []string{
		"postgres://u:hunter2%zz@127.0.0.1:1/ewp",
		"postgres://u:hunter2 x@127.0.0.1:1/ewp",
		"postgres://u@127.0.0.1:1/ewp?connect_timeout=1&password=hunter2",
		"host=127.0.0.1 password=hunter2 dbname=ewp", // a libpq string, taken for a file name
	} {
		for _, args := range [][]string{{"--db", db, in}, {"verify", "--db", db}, {"init", "--db", db}} {
			_, out, errs := runCLI(t, "", args...)
			if strings.Contains(out+errs, "hunter2") {
				t.Errorf("%v: printed\n%s%s", args, out, errs)
			}
		}
	}

	url := pgtest.FreshSchema(t)
	url = strings.Replace(url, "://postgres@", "://postgres:hunter2-user@", 1) + "&password=hunter2-query"
	code, out, errs := runCLI(t, "", "--db", url, in)
	if code != 0 || !strings.Contains(out, "verify --db 'postgres://postgres:xxxxx@") || strings.Contains(out+errs, "hunter2") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
}
