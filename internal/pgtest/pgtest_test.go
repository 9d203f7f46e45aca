package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func query(t *testing.T, url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&n)
	return n, err
}

func TestFreshDatabasesAndRestart(t *testing.T) {
	a, b := DB(t), DB(t)
	if a == b {
		t.Fatal("two tests got the same database")
	}
	n, err := query(t, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server version %d", n)
	c := Get(t)
	if c.bin == "" {
		return
	}
	c.Stop(t)
	if _, err := query(t, a); err == nil {
		t.Fatal("a stopped server answered")
	}
	c.Start(t)
	if _, err := query(t, a); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}
