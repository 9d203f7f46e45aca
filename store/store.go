// Package store opens an EWP ledger by its --db value: a postgres:// or
// postgresql:// URL selects the PostgreSQL ledger (package ledger/postgres),
// anything else is an SQLite file (package ledger/sqlite). Both stores
// keep the same rules and the same hash chain and implement
// ledger.Ledger, which is what ingest, the MCP server and the concept
// graph use. This is the one package that knows both stores (and the
// decision log's PostgreSQL schema, which Create makes beside the
// ledger's); the stores never import each other.
package store

import (
	"context"
	"time"

	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// Ledger is what both stores offer: ledger.Ledger, named here too
// because Open returns it.
type Ledger = ledger.Ledger

var (
	_ Ledger = (*sqlite.Ledger)(nil)
	_ Ledger = (*postgres.Ledger)(nil)
)

// Options tune Open.
type Options struct {
	// ReadOnly opens for reading only (ewp-mcp, verify).
	ReadOnly bool
	// Create makes the ledger when missing: a new SQLite file, or the
	// schema and roles in an empty PostgreSQL database (postgres.Init,
	// idempotent), with the decision log's schema beside it
	// (audit/postgres.Init). Writers (ewp-ingest) set it; readers never
	// do, so a mistyped --db is an error, not a new empty ledger.
	Create bool
	// Now stamps created_at; nil means time.Now.
	Now func() time.Time
	// MaxViewBytes bounds a snapshot's stored form (see sqlite.Options).
	MaxViewBytes int
	// Postgres holds the PostgreSQL-only settings (pool size, statement
	// timeout); ReadOnly and Now above override its fields.
	Postgres postgres.Options
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool { return pgurl.IsPostgres(dsn) }

// Open opens the ledger dsn names.
func Open(ctx context.Context, dsn string, opt Options) (Ledger, error) {
	l, err := open(ctx, dsn, opt)
	if err != nil {
		// It may quote dsn: a password in it (a URL, or a libpq key=value
		// string taken for a file name) never reaches the message.
		return nil, pgurl.Scrub(dsn, err)
	}
	return l, nil
}

func open(ctx context.Context, dsn string, opt Options) (Ledger, error) {
	if IsPostgres(dsn) {
		if opt.Create && !opt.ReadOnly {
			if err := initIfMissing(ctx, dsn); err != nil {
				return nil, err
			}
		}
		po := opt.Postgres
		po.ReadOnly, po.Now, po.MaxViewBytes = opt.ReadOnly, opt.Now, opt.MaxViewBytes
		return done(postgres.Open(ctx, dsn, po))
	}
	lo := sqlite.Options{ReadOnly: opt.ReadOnly, Now: opt.Now, MaxViewBytes: opt.MaxViewBytes}
	if opt.Create {
		return done(sqlite.OpenOrCreate(dsn, lo))
	}
	return done(sqlite.Open(dsn, lo))
}

// initIfMissing makes the ledger's and the decision log's schemas and the
// roles (InitPostgres) unless both schemas are there already (looked up
// in the catalog, which every role may read, not through the log's
// schema, which a writer may not): a writer's login (ewp_writer) may
// append but not create roles, so an ingest into a ledger made by
// `ewp-ingest init` must not run Init again.
func initIfMissing(ctx context.Context, dsn string) error {
	conn, err := pgurl.Connect(ctx, dsn, pgurl.SchemaWork, pgurl.ReadWrite)
	if err != nil {
		return &ledger.Error{Op: "connect", Err: err}
	}
	var both bool
	err = conn.QueryRow(ctx, `SELECT to_regclass('ledger_meta') IS NOT NULL AND EXISTS (SELECT 1 FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'audit_meta')`, auditpg.Schema).Scan(&both)
	conn.Close(ctx)
	if err != nil {
		return &ledger.Error{Op: "look for the ledger", Err: err}
	}
	if both {
		return nil
	}
	return InitPostgres(ctx, dsn)
}

// InitPostgres makes, or completes, the ledger's schema and roles
// (postgres.Init) and the decision log's schema beside it, written by the
// ledger's server role (audit/postgres.Init), in the database at dsn.
// `ewp-ingest init` and Open with Create both make a database this way.
func InitPostgres(ctx context.Context, dsn string) error {
	if err := postgres.Init(ctx, dsn, postgres.Roles{}); err != nil {
		return err
	}
	return auditpg.Init(ctx, dsn, postgres.DefaultRoles.Server)
}

// done keeps a failed open's nil pointer out of the interface, where it
// would not compare equal to nil.
func done[L Ledger](l L, err error) (Ledger, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
