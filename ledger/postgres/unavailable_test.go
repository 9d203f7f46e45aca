package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/warrant"
)

// TestIsUnavailable: the failures that mean the database is out of
// reach are told from refusals, other server errors and the caller's own
// deadline, wrapped as the ledger wraps them.
func TestIsUnavailable(t *testing.T) {
	wrap := func(err error) error { return &ledger.Error{Op: "read snapshot", Err: err} }
	cases := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true},  // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true},  // cannot_connect_now (starting up)
		{&pgconn.PgError{Code: "08006"}, true},  // connection_failure
		{&pgconn.PgError{Code: "57014"}, true},  // statement_timeout
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "42501"}, false}, // permission denied: the operator's to fix
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{context.DeadlineExceeded, false},
		{&warrant.Error{Code: warrant.CodeImmutableRecord}, false},
		{errors.New("disk on fire"), false},
	}
	for _, c := range cases {
		if got := postgres.IsUnavailable(wrap(c.err)); got != c.want {
			t.Errorf("IsUnavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if postgres.IsUnavailable(nil) {
		t.Error("nil is not a failure")
	}
}

// TestIsUnavailableAgainstAStoppedServer: a ledger whose server is
// stopped fails fast with an error IsUnavailable recognises, and reads
// again once it is back.
func TestIsUnavailableAgainstAStoppedServer(t *testing.T) {
	l, _ := seeded(t)
	ctx := ctxT(t)
	c := pgtest.Get(t)
	c.Stop(t)
	_, err := l.Head(ctx)
	c.Start(t)
	if err == nil || !postgres.IsUnavailable(err) {
		t.Fatalf("with the server stopped: %v (unavailable: %v)", err, postgres.IsUnavailable(err))
	}
	if _, err := l.Head(ctx); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
}
