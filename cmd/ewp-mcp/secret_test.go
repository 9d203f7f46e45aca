package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/store"
)

// TestPasswordsNeverLogged: a password in --db or --standby, in the user
// info or a query parameter, in a URL that parses or one that does not,
// reaches neither the start-up log nor an error.
func TestPasswordsNeverLogged(t *testing.T) {
	for _, args := range [][]string{
		{"--db", "postgres://u:hunter2%zz@127.0.0.1:1/ewp"},
		{"--db", "postgres://u@127.0.0.1:1/ewp?connect_timeout=1&password=hunter2"},
		{"--db", "postgres://u@127.0.0.1:1/ewp?connect_timeout=1", "--standby", "host=sb password=hunter2"},
	} {
		r := runWith(t, args, env(), "")
		if r.code == 0 || strings.Contains(r.stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}

	url := pgtest.FreshSchema(t)
	url = strings.Replace(url, "://postgres@", "://postgres:hunter2-user@", 1) + "&password=hunter2-query"
	l, err := store.Open(context.Background(), url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	var out, errb syncbuf.Buffer
	code := run(context.Background(), []string{"--db", url, "--allow-ingest"}, env(), strings.NewReader(""), &out, &errb, openStore)
	log := errb.String()
	if code != 0 || !strings.Contains(log, "serving MCP on stdio") || !strings.Contains(log, "postgres:xxxxx@") || strings.Contains(log, "hunter2") {
		t.Errorf("exit %d, log:\n%s", code, log)
	}
}
