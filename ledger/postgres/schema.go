package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
)

// SchemaVersion is the layout this build reads and writes. It mirrors the
// SQLite ledger's tables (ledger/sqlite.SchemaVersion, also 1), but each
// store numbers its own layout: a change to one need not touch the other.
const SchemaVersion = 1

// Ids and texts that came from a view are bytea, not text: a view may hold
// a NUL or, in older stores, bytes that are not UTF-8, which PostgreSQL's
// text refuses, and bytea compares and sorts byte by byte as Go and
// SQLite's BINARY collation do. Search columns are text (folded, NULs
// dropped), because they only narrow candidates that Go then checks.
const schemaDDL = `
CREATE TABLE ledger_meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);
CREATE TABLE snapshots (
	seq              bigint PRIMARY KEY,
	proposition_id   bytea NOT NULL,
	view_id          bytea NOT NULL,
	body             bytea NOT NULL,
	body_sha256      bytea NOT NULL,
	canonical_sha256 bytea NOT NULL,
	created_at       text NOT NULL,
	UNIQUE (proposition_id, view_id)
);
CREATE INDEX snapshots_latest ON snapshots (proposition_id, seq);
CREATE TABLE records (
	proposition_id bytea NOT NULL,
	kind           text NOT NULL,
	record_id      bytea NOT NULL,
	sum            bytea NOT NULL,
	view_id        bytea NOT NULL,
	PRIMARY KEY (proposition_id, kind, record_id)
);
CREATE TABLE events (
	seq       bigint PRIMARY KEY,
	tbl       text NOT NULL,
	row_seq   bigint NOT NULL,
	payload   text NOT NULL,
	prev_hash bytea NOT NULL,
	hash      bytea NOT NULL,
	UNIQUE (tbl, row_seq)
);
CREATE TABLE primitive_revisions (
	seq          bigint PRIMARY KEY,
	primitive_id bytea NOT NULL,
	name_fold    bytea NOT NULL,
	body         bytea NOT NULL,
	created_at   text NOT NULL
);
CREATE INDEX primitive_revisions_id ON primitive_revisions (primitive_id, seq);
-- Search: every proposition once, and the first text of every assertion
-- id, both folded (snapshot.Fold). Derived from snapshots, and append-only
-- like them.
CREATE TABLE propositions (
	proposition_id bytea PRIMARY KEY,
	id_fold        text NOT NULL
);
CREATE TABLE assertion_text (
	proposition_id bytea NOT NULL,
	assertion_id   bytea NOT NULL,
	text_fold      text NOT NULL,
	PRIMARY KEY (proposition_id, assertion_id)
);
CREATE FUNCTION ewp_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'EWP_REFUSE_IMMUTABLE_RECORD: the ledger is append-only; % on % is refused', TG_OP, TG_TABLE_NAME;
END $$;
`

// trigramDDL makes "contains" searches index lookups where the pg_trgm
// extension exists (PostgreSQL's contrib; trusted since version 13, so a
// database owner may create it). Without it search scans, as SQLite's
// does for short queries.
const trigramDDL = `
CREATE INDEX propositions_trgm ON propositions USING gin (id_fold %[1]s.gin_trgm_ops);
CREATE INDEX assertion_text_trgm ON assertion_text USING gin (text_fold %[1]s.gin_trgm_ops);
`

// appendOnly are the tables whose rows are facts. Their triggers refuse
// UPDATE and DELETE (per row) and TRUNCATE (per statement, which row
// triggers do not see), whoever asks, table owner included.
var appendOnly = []string{"ledger_meta", "snapshots", "records", "events", "primitive_revisions", "propositions", "assertion_text"}

// triggerNames are the append-only triggers as the schema creates them;
// every write checks that they are all there and enabled.
func triggerNames() []string {
	var out []string
	for _, t := range appendOnly {
		out = append(out, t+"_no_change", t+"_no_truncate")
	}
	return out
}

func triggersDDL() string {
	var b strings.Builder
	for _, t := range appendOnly {
		fmt.Fprintf(&b, "CREATE TRIGGER %s_no_change BEFORE UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION ewp_refuse_change();\n", t, t)
		fmt.Fprintf(&b, "CREATE TRIGGER %s_no_truncate BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION ewp_refuse_change();\n", t, t)
	}
	return b.String()
}

// Roles names the database roles Init creates. They are group roles
// (NOLOGIN): an operator grants them to the login roles of each process,
// e.g. CREATE ROLE mcp_eu1 LOGIN PASSWORD '…' IN ROLE ewp_reader.
type Roles struct {
	// Reader may only SELECT: the role of ewp-mcp replicas, which also
	// open their connections with default_transaction_read_only.
	Reader string
	// Writer may SELECT and INSERT into the ledger tables: ewp-ingest.
	// Nobody may UPDATE, DELETE or TRUNCATE (no grant, and the triggers).
	Writer string
	// Server reads the ledger and, once the decision log lives here, is
	// the only role that writes its tables.
	Server string
}

// DefaultRoles are the role names Init uses when given none.
var DefaultRoles = Roles{Reader: "ewp_reader", Writer: "ewp_writer", Server: "ewp_server"}

// initLock serialises Init across processes, the decision log's Init
// included (a different key from the chain's lock, so Init never waits
// for a long ingest).
const initLock = pgurl.LockInit

// Init creates the ledger's schema and roles in the database at url, and
// changes nothing that is already there as this build would make it: run
// it as often as wanted, from several processes at once. The connecting
// user must own the database (or be a superuser) and have CREATEROLE. A
// database holding other tables and no ledger is refused untouched.
func Init(ctx context.Context, url string, roles Roles) error {
	roles = roles.withDefaults()
	conn, err := pgurl.Connect(ctx, url, pgurl.SchemaWork, pgurl.ReadWrite)
	if err != nil {
		return ledgerErr("connect", err)
	}
	defer conn.Close(ctx)
	for attempt := 1; ; attempt++ {
		err := initOnce(ctx, conn, roles)
		if err == nil || attempt == 5 || !catalogRace(err) {
			return err
		}
		time.Sleep(time.Duration(attempt*20) * time.Millisecond)
	}
}

// catalogRace reports an error of two Inits on different databases of
// one server changing the same role at once (roles are the server's, and
// the advisory lock only the database's); the loser tries again and then
// finds the role made.
func catalogRace(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42710" || pe.Code == "40001" || pe.Code == "40P01" ||
		pe.Code == "XX000" && strings.Contains(pe.Message, "concurrently"))
}

func initOnce(ctx context.Context, conn *pgx.Conn, roles Roles) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return ledgerErr("init", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(initLock)); err != nil {
		return ledgerErr("init", err)
	}
	if err := createSchema(ctx, tx); err != nil {
		return err
	}
	if err := createRoles(ctx, tx, roles); err != nil {
		return ledgerErr("init roles", err)
	}
	return ledgerErrOrNil("init", tx.Commit(ctx))
}

func (r Roles) withDefaults() Roles {
	if r.Reader == "" {
		r.Reader = DefaultRoles.Reader
	}
	if r.Writer == "" {
		r.Writer = DefaultRoles.Writer
	}
	if r.Server == "" {
		r.Server = DefaultRoles.Server
	}
	return r
}

func createSchema(ctx context.Context, tx pgx.Tx) error {
	var meta bool
	var tables int
	err := tx.QueryRow(ctx, `SELECT to_regclass('ledger_meta') IS NOT NULL,
		(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema())`).Scan(&meta, &tables)
	if err != nil {
		return ledgerErr("init", err)
	}
	if meta {
		return checkVersion(ctx, tx, "the database")
	}
	if tables > 0 {
		return errors.New("the database holds other tables and no ledger_meta: it is not an EWP ledger; point --db at an empty database or a ledger")
	}
	if _, err := tx.Exec(ctx, schemaDDL+triggersDDL()); err != nil {
		return ledgerErr("create ledger schema", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger_meta (key, value) VALUES ('schema_version', $1), ('search_text', 'casefold')`, strconv.Itoa(SchemaVersion)); err != nil {
		return ledgerErr("create ledger schema", err)
	}
	return trigram(ctx, tx)
}

// trigram adds the search indexes when pg_trgm can be had, inside a
// savepoint so that its absence leaves the rest of Init intact.
func trigram(ctx context.Context, tx pgx.Tx) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return ledgerErr("init", err)
	}
	if _, err := sp.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm`); err != nil {
		return ledgerErrOrNil("init", sp.Rollback(ctx))
	}
	// The operator class lives in whichever schema the extension was
	// first created in, which need not be on this ledger's search_path.
	var where string
	err = sp.QueryRow(ctx, `SELECT n.nspname FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace WHERE c.opcname = 'gin_trgm_ops' LIMIT 1`).Scan(&where)
	if err != nil {
		return ledgerErr("find pg_trgm", err)
	}
	if _, err := sp.Exec(ctx, fmt.Sprintf(trigramDDL, ident(where))); err != nil {
		return ledgerErr("create search indexes", err)
	}
	return ledgerErrOrNil("init", sp.Commit(ctx))
}

// createRoles makes the three group roles if missing and (re)grants what
// each may do; GRANT is idempotent.
func createRoles(ctx context.Context, tx pgx.Tx, r Roles) error {
	tables := strings.Join(appendOnly, ", ")
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	for _, name := range []string{r.Reader, r.Writer, r.Server} {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, name).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if err := createRole(ctx, tx, name); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `GRANT USAGE ON SCHEMA `+ident(schema)+` TO `+ident(name)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `GRANT SELECT ON `+tables+` TO `+ident(name)); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `GRANT INSERT ON `+tables+` TO `+ident(r.Writer)); err != nil {
		return err
	}
	// A login as the reader role itself gets read-only transactions by
	// default. Role settings are not inherited: a member login needs its
	// own ALTER ROLE … SET (docs/scale-out.md, "Roles"); replicas set it on their
	// connections as well (Options).
	_, err := tx.Exec(ctx, `ALTER ROLE `+ident(r.Reader)+` SET default_transaction_read_only = on`)
	return err
}

// createRole creates a group role in a savepoint: roles belong to the
// whole server, so Init on two databases of one server may race to create
// the same one, and the loser (duplicate_object, or unique_violation on
// the catalog) finds it made, with its own transaction still usable.
func createRole(ctx context.Context, tx pgx.Tx, name string) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, `CREATE ROLE `+ident(name)+` NOLOGIN`); err != nil {
		sp.Rollback(ctx) //nolint:errcheck // the error that matters is err
		if isCode(err, "42710") || isCode(err, "23505") {
			return nil
		}
		return err
	}
	return sp.Commit(ctx)
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// ErrSchemaVersion is package ledger's, so callers test one error for
// either store.
var ErrSchemaVersion = ledger.ErrSchemaVersion

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkVersion refuses databases that are not ledgers of this version.
func checkVersion(ctx context.Context, q queryRower, what string) error {
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM ledger_meta WHERE key = 'schema_version'`).Scan(&v)
	if isCode(err, "42P01") {
		return fmt.Errorf("%s is not an EWP ledger (no ledger_meta table); create it with `ewp-ingest init --db URL`", what)
	}
	if err != nil {
		return ledgerErr("read schema version", err)
	}
	if v != strconv.Itoa(SchemaVersion) {
		return fmt.Errorf("%w: %s has schema_version %s, this build reads version %d; use the ewp release that wrote it or migrate the ledger", ErrSchemaVersion, what, v, SchemaVersion)
	}
	return nil
}
