package pgtest

import (
	"context"
	"os"
	"os/exec"
	"strings"
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

// TestHelperNoServer asks for a database; the parent test runs it in a
// process where none can be had.
func TestHelperNoServer(t *testing.T) {
	if os.Getenv("EWP_PGTEST_HELPER") == "" {
		t.Skip("helper process: run by TestNoServerSkipsLoudlyOrFailsUnderCI")
	}
	DB(t)
	t.Log("got a database")
}

// TestNoServerSkipsLoudlyOrFailsUnderCI: without a server the tests skip
// with a loud message, and with CI set they fail instead.
func TestNoServerSkipsLoudlyOrFailsUnderCI(t *testing.T) {
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNoServer$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "EWP_PGTEST_HELPER=1", "CI="+ci,
			EnvURL+"=postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "no PostgreSQL: ") || !strings.Contains(out, "--- SKIP") {
		t.Fatalf("without CI: %v\n%s", err, out)
	}
	out, err = run("true")
	if err == nil || !strings.Contains(out, "no PostgreSQL: ") || !strings.Contains(out, "CI is set") || !strings.Contains(out, "--- FAIL") {
		t.Fatalf("with CI: %v\n%s", err, out)
	}
}
