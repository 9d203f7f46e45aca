package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err means the database could not be
// reached or could not answer in time (down, restarting, refusing
// connections, the connection cut, a statement past statement_timeout),
// as opposed to a refusal or a damaged ledger. ewp-mcp answers such
// failures with EWP_STORE_UNAVAILABLE: the same call may succeed in a
// moment, on this replica or another, and the pool reconnects by itself.
// The caller's own deadline or cancellation is not the database's
// failure and is left to the caller.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch c := pe.Code; {
		case strings.HasPrefix(c, "08"): // connection exception
			return true
		case c == "57P01", c == "57P02", c == "57P03": // shutting down, crash, starting up
			return true
		case c == "57014": // query_canceled: statement_timeout
			return true
		case c == "53300": // too_many_connections
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return pgconn.SafeToRetry(err)
}
