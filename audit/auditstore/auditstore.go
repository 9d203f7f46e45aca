// Package auditstore opens the decision log that --db and --audit name:
// in the PostgreSQL database when either is a postgres:// or
// postgresql:// URL (package audit/postgres, schema ewp_audit beside the
// ledger), else in an SQLite file (package audit/sqlite, LEDGER.audit
// beside the ledger unless --audit names another). [Log] is the method
// set both stores share: what ewp-mcp records through and what ewp-audit's
// commands read.
package auditstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/pgurl"
)

// Log is what both stores offer.
type Log interface {
	audit.Log
	// The agent register, results, once-approval lookup and budget
	// counters every store keeps (audit/agents.go).
	audit.Agents
	audit.Results
	audit.OnceApprovals
	audit.Counters
	Each(ctx context.Context, q auditchain.Query, fn func(*audit.Decision) error) error
	UseOf(ctx context.Context, approvalID string) (*auditchain.Use, error)
	Verify(ctx context.Context) (auditchain.VerifyReport, error)
	VerifyHead(ctx context.Context, want audit.Head) (auditchain.VerifyReport, error)
	CommitStats() (commits, writes int64)
	// Path is the file or the database URL (password hidden).
	Path() string
}

var (
	_ Log = (*sqlite.Log)(nil)
	_ Log = (*postgres.Log)(nil)
)

// Options tune Open.
type Options struct {
	// ReadOnly opens for reading only (ewp-audit list, show, verify).
	ReadOnly bool
	// Create makes the log when missing (ewp-mcp at start-up): a new
	// SQLite file, or the schema in PostgreSQL (postgres.Init, which needs
	// a role allowed to create it; replicas' roles are not, so there it is
	// normally made beforehand by `ewp-ingest init`).
	Create bool
	// Now is the log's clock; nil means time.Now.
	Now func() time.Time
	// Postgres holds the PostgreSQL-only settings; ReadOnly and Now above
	// override its fields.
	Postgres postgres.Options
}

// IsPostgres reports whether s names a PostgreSQL database.
func IsPostgres(s string) bool { return pgurl.IsPostgres(s) }

// Where is the log --db db and --audit auditFlag name: a database URL or
// a file path.
func Where(db, auditFlag string) (string, error) {
	switch {
	case auditFlag != "":
		return auditFlag, nil
	case IsPostgres(db):
		return db, nil
	case db != "":
		return sqlite.DefaultPath(db), nil
	}
	return "", errors.New("say which log: --db LEDGER (the log is beside it: LEDGER.audit for a file, schema ewp_audit in a PostgreSQL database) or --audit PATH|URL")
}

// Open opens the log --db db and --audit auditFlag name (see Where).
func Open(ctx context.Context, db, auditFlag string, opt Options) (Log, error) {
	l, err := open(ctx, db, auditFlag, opt)
	if err != nil {
		// It may quote db or auditFlag: a password in either (a URL, or a
		// libpq key=value string taken for a file name) never reaches the
		// message.
		return nil, pgurl.Scrub(auditFlag, pgurl.Scrub(db, err))
	}
	return l, nil
}

func open(ctx context.Context, db, auditFlag string, opt Options) (Log, error) {
	where, err := Where(db, auditFlag)
	if err != nil {
		return nil, err
	}
	if !IsPostgres(where) {
		so := sqlite.Options{ReadOnly: opt.ReadOnly, Now: opt.Now}
		openFile := sqlite.Open
		if opt.Create && !opt.ReadOnly {
			openFile = sqlite.OpenOrCreate
		}
		l, err := openFile(where, so)
		if err != nil {
			return nil, err // not a nil *sqlite.Log in a non-nil Log
		}
		return l, nil
	}
	po := opt.Postgres
	po.ReadOnly, po.Now = opt.ReadOnly, opt.Now
	l, err := postgres.Open(ctx, where, po)
	if err != nil && errors.Is(err, postgres.ErrNoLog) && opt.Create && !opt.ReadOnly {
		if ierr := postgres.Init(ctx, where, ""); ierr != nil {
			return nil, fmt.Errorf("%w; creating it failed too: %v", err, ierr)
		}
		l, err = postgres.Open(ctx, where, po)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}
