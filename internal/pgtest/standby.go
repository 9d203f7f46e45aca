package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var standbyCount atomic.Int64

// Standby is a streaming-replication standby of the throwaway cluster,
// made with pg_basebackup -R and serving reads (hot standby). A test can
// pause its replay to make it fall behind the primary.
type Standby struct {
	// AdminURL connects as the superuser to the standby's maintenance
	// database.
	AdminURL string
	primary  *Cluster
	dir      string // the standby's data directory, inside the cluster's
	port     int
}

// Standby makes a standby of the cluster for t, started and caught up,
// and stopped and removed when t ends. It skips on a server from
// EWP_TEST_POSTGRES_URL, which the tests cannot copy.
func (c *Cluster) Standby(t testing.TB) *Standby {
	t.Helper()
	c.needLocal(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Standby{primary: c, port: port,
		dir:      filepath.Join(c.dir, fmt.Sprintf("standby-%d", standbyCount.Add(1))),
		AdminURL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	// -R writes standby.signal and primary_conninfo; initdb's pg_hba lets
	// local replication connections in (trust).
	out, err := c.run("pg_basebackup", "-D", s.dir, "-R", "-X", "stream", "-c", "fast", "--no-sync",
		"-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "postgres")
	if err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	t.Cleanup(s.stop)
	opts := strings.Join([]string{
		"-c listen_addresses=127.0.0.1", "-p " + strconv.Itoa(port), "-k " + c.dir,
		"-c fsync=off", "-c full_page_writes=off", "-c hot_standby=on",
		"-c max_connections=200", "-c shared_buffers=32MB",
	}, " ")
	if out, err := c.run("pg_ctl", "-D", s.dir, "-l", s.dir+".log", "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(s.dir + ".log")
		t.Fatalf("pg_ctl start (standby): %v\n%s\n%s", err, out, log)
	}
	s.WaitCaughtUp(t)
	return s
}

// URL is the standby's URL for database db (the primary's databases are
// all there, read-only).
func (s *Standby) URL(db string) string {
	u, err := url.Parse(s.AdminURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

// On is dbURL (a URL of the primary, as DB returns) pointed at the
// standby: the same database, user and parameters.
func (s *Standby) On(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic(err)
	}
	u.Host = "127.0.0.1:" + strconv.Itoa(s.port)
	return u.String()
}

// PauseReplay stops the standby applying WAL (pg_wal_replay_pause): it
// keeps receiving it and serving reads, and falls behind the primary
// until ResumeReplay.
func (s *Standby) PauseReplay(t testing.TB) {
	t.Helper()
	s.exec(t, `SELECT pg_wal_replay_pause()`)
	// Pausing takes effect at the next record; wait until it has.
	s.poll(t, "replay to pause", `SELECT pg_get_wal_replay_pause_state() = 'paused'`)
}

// ResumeReplay lets the standby apply WAL again.
func (s *Standby) ResumeReplay(t testing.TB) {
	t.Helper()
	s.exec(t, `SELECT pg_wal_replay_resume()`)
}

// WaitCaughtUp waits until the standby has replayed everything the
// primary had committed when it was called. The cluster commits
// asynchronously (a commit is visible before its WAL is written), so it
// first commits a transaction of its own synchronously, which flushes
// all WAL before it, and waits for the standby to pass the flush point.
func (s *Standby) WaitCaughtUp(t testing.TB) {
	t.Helper()
	lsn, err := flushPrimary(s.primary.AdminURL)
	if err != nil {
		t.Fatalf("flush the primary's WAL: %v", err)
	}
	s.poll(t, "replay to reach "+lsn, `SELECT pg_last_wal_replay_lsn() >= '`+lsn+`'::pg_lsn`)
}

// flushPrimary commits a transaction that wrote WAL (a transactional
// logical message: no table needed) under synchronous_commit=on, which
// flushes the WAL up to its commit, and returns the flush position. A
// transaction that only took an xid would not do: PostgreSQL commits one
// that wrote no WAL asynchronously whatever the setting.
func flushPrimary(adminURL string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_logical_emit_message(true, 'ewp-pgtest', 'flush')`); err != nil {
		return "", err
	}
	var lsn string
	err = conn.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&lsn)
	return lsn, err
}

func (s *Standby) poll(t testing.TB, what, sql string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		err := query1(s.AdminURL, sql, &ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby: waited 30 s for %s (%v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Standby) exec(t testing.TB, sql string) {
	t.Helper()
	var discard any
	if err := query1(s.AdminURL, sql, &discard); err != nil {
		t.Fatalf("standby: %s: %v", sql, err)
	}
}

// stop stops the standby at once and removes its files.
func (s *Standby) stop() {
	if _, err := os.Stat(filepath.Join(s.dir, "postmaster.pid")); err == nil {
		s.primary.run("pg_ctl", "-D", s.dir, "-m", "immediate", "-w", "stop") //nolint:errcheck // best effort at cleanup
	}
	os.RemoveAll(s.dir)
	os.Remove(s.dir + ".log")
}

// query1 runs a one-row, one-column query on a fresh connection.
func query1(dbURL, sql string, dst any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dst)
}
