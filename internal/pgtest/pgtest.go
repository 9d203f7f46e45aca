// Package pgtest gives tests a real PostgreSQL server: one throwaway
// cluster per test binary, started from the machine's binaries
// (/usr/lib/postgresql/*/bin: initdb, pg_ctl; as the postgres user when the
// tests run as root), or the server named by EWP_TEST_POSTGRES_URL; and a
// fresh database per test.
//
// A package's tests opt in with a TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// and take a database with [DB]. Where neither binaries nor the variable
// exist, DB skips the test with a loud message; when CI is set (.ci/run
// sets CI=true) it fails instead, so a CI machine without PostgreSQL cannot
// pass by skipping.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/internal/testskip"
)

// EnvURL names a server to use instead of a throwaway cluster. Its user
// must be allowed to create databases (and, for the ledger's Init, roles).
const EnvURL = "EWP_TEST_POSTGRES_URL"

var (
	mainCalled bool
	once       sync.Once
	cluster    *Cluster
	startErr   error
	dbCount    atomic.Int64
)

// Main runs the package's tests and stops the cluster, if one was started,
// when they end.
func Main(m *testing.M) {
	mainCalled = true
	code := m.Run()
	if cluster != nil {
		cluster.dropTemplates()
		cluster.teardown()
	}
	os.Exit(code)
}

// Cluster is the server the tests use. Stop and Start exist only for a
// throwaway cluster (outage tests); on a server from EWP_TEST_POSTGRES_URL
// they skip the test.
type Cluster struct {
	// AdminURL connects as a superuser (or the EnvURL user) to the
	// maintenance database.
	AdminURL string
	bin      string // directory of initdb and pg_ctl; "" for EnvURL
	dir      string // temp dir holding data/, the socket and the log
	port     int
	asUser   string // "postgres" when running as root, else ""
}

// Get returns the cluster, starting it on first use; it skips or fails t
// when there is none (see the package doc).
func Get(t testing.TB) *Cluster {
	t.Helper()
	if !mainCalled {
		t.Fatal("pgtest: the package needs func TestMain(m *testing.M) { pgtest.Main(m) }, which stops the cluster after the tests")
	}
	once.Do(func() { cluster, startErr = start() })
	if startErr != nil {
		unavailable(t, startErr)
	}
	return cluster
}

// unavailable skips loudly, or fails under CI.
func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := testskip.Message(testskip.PostgreSQL, fmt.Sprintf("%v; the PostgreSQL store is NOT tested here: install postgresql (initdb, pg_ctl under /usr/lib/postgresql/*/bin) or set %s", err, EnvURL))
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: failing instead of skipping)")
	}
	t.Skip(msg) // go run ./scripts/testrun lists it in its summary, without -v
}

// DB creates a fresh, empty database for t, dropped when t ends, and
// returns its URL (connecting as the admin user).
func DB(t testing.TB) string {
	t.Helper()
	return DBFrom(t, "")
}

// DBFrom is DB with a copy of a template database (see Template); "" is
// PostgreSQL's empty template.
func DBFrom(t testing.TB, template string) string {
	t.Helper()
	c := Get(t)
	name := fmt.Sprintf("ewp_test_%d_%d", os.Getpid(), dbCount.Add(1))
	ctx := context.Background()
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if err := c.admin(ctx, create); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := c.admin(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.URL(name)
}

var templates sync.Map // name → *template

type template struct {
	once sync.Once
	err  error
}

// Template makes, once per test binary, a database called name and runs
// init on its URL (creating a schema, say); tests then take copies of it
// with DBFrom, which is much faster than running init for each. init must
// close its connections: a template in use cannot be copied.
func Template(t testing.TB, name string, init func(url string) error) string {
	t.Helper()
	c := Get(t)
	v, _ := templates.LoadOrStore(name, &template{})
	tp := v.(*template)
	tp.once.Do(func() {
		ctx := context.Background()
		if tp.err = c.admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); tp.err != nil {
			return
		}
		if tp.err = c.admin(ctx, "CREATE DATABASE "+name); tp.err == nil {
			tp.err = init(c.URL(name))
		}
	})
	if tp.err != nil {
		t.Fatalf("pgtest: template %s: %v", name, tp.err)
	}
	return name
}

// FreshSchema is Schema in an empty database that the test binary's
// tests share (made once, named for the process): a new, empty namespace
// for a store to create its tables in.
func FreshSchema(t testing.TB) string {
	t.Helper()
	db := Template(t, fmt.Sprintf("ewp_fresh_%d", os.Getpid()), func(string) error { return nil })
	return Schema(t, Get(t).URL(db))
}

// Schema creates a fresh schema in the database at dbURL, dropped when t
// ends, and returns dbURL with search_path set to it: a new, empty
// namespace for tables in a few milliseconds, where a new database takes a
// few hundred.
func Schema(t testing.TB, dbURL string) string {
	t.Helper()
	name := fmt.Sprintf("ewp_s_%d_%d", os.Getpid(), dbCount.Add(1))
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA " + name + " CASCADE"); err != nil {
			t.Logf("pgtest: drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// URL is the admin URL with another database.
func (c *Cluster) URL(db string) string {
	u, err := url.Parse(c.AdminURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

// WithUser is url with another user (no password: the throwaway cluster
// trusts local connections).
func WithUser(dbURL, user string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic(err)
	}
	u.User = url.User(user)
	return u.String()
}

func (c *Cluster) admin(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.AdminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func start() (*Cluster, error) {
	if u := os.Getenv(EnvURL); u != "" {
		c := &Cluster{AdminURL: u}
		if err := c.admin(context.Background(), "SELECT 1"); err != nil {
			return nil, fmt.Errorf("%s=%s does not answer: %w", EnvURL, u, err)
		}
		return c, nil
	}
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
	}
	if err := c.initdb(); err != nil {
		c.teardown()
		return nil, err
	}
	if err := c.startServer(); err != nil {
		c.teardown()
		return nil, err
	}
	return c, nil
}

// findBin returns the newest /usr/lib/postgresql/*/bin holding initdb.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no /usr/lib/postgresql/*/bin/initdb on this machine")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func (c *Cluster) initdb() error {
	dir, err := os.MkdirTemp("", "ewp-pgtest-")
	if err != nil {
		return err
	}
	c.dir = dir
	if c.asUser != "" {
		u, err := user.Lookup(c.asUser)
		if err != nil {
			return fmt.Errorf("running as root needs the %s user to run the server: %w", c.asUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
	}
	out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of the cluster's binaries, as the postgres user when root.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// EnvDurable, set to 1, keeps fsync and full_page_writes on in the
// throwaway cluster, for benchmarks that compare with the SQLite ledger's
// synchronous=FULL commits.
const EnvDurable = "EWP_PGTEST_DURABLE"

// startServer starts the server on a free local port and a socket in the
// cluster's directory. fsync is off unless EnvDurable is set: a test
// cluster is thrown away, and surviving a power cut is PostgreSQL's
// business, not these tests'. synchronous_commit stays on, so a commit is
// in the WAL (in the page cache) before it returns, and an immediate stop,
// which is a crash of the server, loses nothing committed, as outage
// tests require.
func (c *Cluster) startServer() error {
	if c.port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		c.port = p
		c.AdminURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p)
	}
	durability := "off"
	if os.Getenv(EnvDurable) == "1" {
		durability = "on"
	}
	opts := strings.Join([]string{
		"-c listen_addresses=127.0.0.1", "-p " + strconv.Itoa(c.port), "-k " + c.dir,
		"-c fsync=" + durability, "-c full_page_writes=" + durability,
		"-c max_connections=200", "-c shared_buffers=128MB",
	}, " ")
	out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops the server at once (mode immediate: as a crash would), for
// outage tests. Connections break; Start brings it back on the same port.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	c.needLocal(t)
	if out, err := c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts a stopped server again.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	c.needLocal(t)
	if err := c.startServer(); err != nil {
		t.Fatal(err)
	}
}

// Restart stops and starts the server.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop(t)
	c.Start(t)
}

func (c *Cluster) needLocal(t testing.TB) {
	t.Helper()
	if c.bin == "" {
		t.Skipf("the server from %s cannot be stopped by the tests; this test needs a throwaway cluster", EnvURL)
	}
}

// dropTemplates removes the templates from a server the tests do not own.
func (c *Cluster) dropTemplates() {
	if c.bin != "" {
		return // the whole cluster goes
	}
	templates.Range(func(k, _ any) bool {
		c.admin(context.Background(), "DROP DATABASE IF EXISTS "+k.(string)+" WITH (FORCE)") //nolint:errcheck // best effort at exit
		return true
	})
}

// teardown stops a throwaway server and removes its files.
func (c *Cluster) teardown() {
	if c.bin == "" || c.dir == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(c.data(), "postmaster.pid")); err == nil {
		c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop") //nolint:errcheck // best effort at exit
	}
	os.RemoveAll(c.dir)
}
