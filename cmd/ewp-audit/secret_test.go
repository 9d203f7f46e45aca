package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestPasswordsNeverPrinted: a password in a --db URL, in the user info or
// a query parameter, in a URL that parses or one that does not, appears
// in no output: not in errors, not in the approve hint of show.
func TestPasswordsNeverPrinted(t *testing.T) {
	t.Chdir(t.TempDir()) // a libpq string is a file name to ewp-audit (which creates none)
	for _, db := range []string{
		"postgres://u:hunter2%zz@127.0.0.1:1/ewp",
		"postgres://u:hunter2 x@127.0.0.1:1/ewp",
		"postgres://u@127.0.0.1:1/ewp?sslmode=disable&password=hunter2&connect_timeout=1",
		"postgres://u@127.0.0.1:1/ewp?sslmode=disable&sslpassword=hunter2&connect_timeout=1",
		"host=127.0.0.1 password=hunter2 dbname=ewp", // a libpq string, taken for a file name
	} {
		_, out, errs := cli(t, "list", "--db", db)
		if strings.Contains(out+errs, "hunter2") {
			t.Errorf("--db %s: printed\n%s%s", db, out, errs)
		}
	}

	url := pgtest.DB(t)
	url = strings.Replace(url, "://postgres@", "://postgres:hunter2-user@", 1) + "&password=hunter2-query"
	l, err := auditstore.Open(context.Background(), url, "", auditstore.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d := pending("P-db", 1)
	if err := l.Record(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	l.Close()
	out, errs := wantExit(t, 0, "show", "--db", url, d.ID)
	if !strings.Contains(out, "ewp-audit approve --db postgres://postgres:xxxxx@") || strings.Contains(out+errs, "hunter2") {
		t.Errorf("show's hint:\n%s%s", out, errs)
	}
}
