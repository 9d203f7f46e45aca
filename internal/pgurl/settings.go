package pgurl

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The defaults of the settings a connection string may carry, used where
// it carries none and the store's options name none either.
const (
	// DefaultConnectTimeout bounds each connection attempt, so a process
	// whose database is down gets an error instead of hanging.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultStatementTimeout is sent as statement_timeout on every
	// connection, so a stuck statement fails instead of holding one.
	DefaultStatementTimeout = 30 * time.Second
)

// DefaultPoolSize is the most connections a pool holds by default:
// max(4, 2×GOMAXPROCS).
func DefaultPoolSize() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// Settings tune a store's connections; both stores' Options embed them.
// They are fallbacks: a setting given in the connection string
// (pool_max_conns, connect_timeout, statement_timeout, as a URL parameter,
// in a service file or, for the connect timeout, PGCONNECT_TIMEOUT)
// always wins, so one --db value configures the ledger and the decision
// log alike; where it gives none, a non-zero field here is used, and the
// package default otherwise.
type Settings struct {
	// PoolSize is the most connections a pool holds; 0 means
	// DefaultPoolSize.
	PoolSize int
	// StatementTimeout bounds every statement on the server; 0 means
	// DefaultStatementTimeout, negative none.
	StatementTimeout time.Duration
	// ConnectTimeout bounds each connection attempt; 0 means
	// DefaultConnectTimeout. A connect_timeout of 0 in the connection
	// string (libpq's "wait for ever") counts as not given: an outage
	// must not hang a call.
	ConnectTimeout time.Duration
}

// Access says whether connections may write. Its zero value is not one:
// it is taken as ReadOnly, the safe side.
type Access int

const (
	// ReadWrite leaves transactions as the server's and the role's
	// defaults make them.
	ReadWrite Access = iota + 1
	// ReadOnly sets default_transaction_read_only on every connection,
	// whatever the connection string says: the process can never write,
	// whatever its role may do.
	ReadOnly
)

// AccessOf is ReadOnly when readOnly, ReadWrite otherwise.
func AccessOf(readOnly bool) Access {
	if readOnly {
		return ReadOnly
	}
	return ReadWrite
}

// PoolConfig parses dsn into a pool's configuration with s and a applied
// (see Settings). Its error names dsn redacted and carries no secret.
func PoolConfig(dsn string, s Settings, a Access) (*pgxpool.Config, error) {
	given, err := givenSettings(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, parseErr(dsn, err)
	}
	if !given.poolSize {
		cfg.MaxConns = int32(s.PoolSize)
		if s.PoolSize <= 0 {
			cfg.MaxConns = int32(DefaultPoolSize())
		}
	}
	s.apply(cfg.ConnConfig, given, a)
	return cfg, nil
}

// ConnConfig is PoolConfig for a single connection (Init, a look in the
// catalog): the same rule for the connect and statement timeouts. The
// pool's parameters (pool_max_conns, …) are left out, where pgx would
// send them to the server, which refuses them: the --db value a store's
// pool takes opens its Init's connection too.
func ConnConfig(dsn string, s Settings, a Access) (*pgx.ConnConfig, error) {
	given, err := givenSettings(dsn)
	if err != nil {
		return nil, err
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, parseErr(dsn, err)
	}
	for k := range cc.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			delete(cc.RuntimeParams, k)
		}
	}
	s.apply(cc, given, a)
	return cc, nil
}

// Connect opens one connection to dsn configured by ConnConfig. Its error
// carries no secret of dsn.
func Connect(ctx context.Context, dsn string, s Settings, a Access) (*pgx.Conn, error) {
	cc, err := ConnConfig(dsn, s, a)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, Scrub(dsn, err)
	}
	return conn, nil
}

// given records which settings the connection string itself holds.
type given struct {
	poolSize, statementTimeout bool
}

// givenSettings reads dsn as pgx does (URL, service file, environment)
// and reports which settings it gives: pgx passes parameters it does not
// know itself (pool_max_conns, statement_timeout) on as run-time
// parameters, so their presence there is their presence in dsn.
func givenSettings(dsn string) (given, error) {
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return given{}, parseErr(dsn, err)
	}
	_, pool := pc.RuntimeParams["pool_max_conns"]
	_, st := pc.RuntimeParams["statement_timeout"]
	return given{poolSize: pool, statementTimeout: st}, nil
}

// apply sets the connect and statement timeouts dsn did not give, and
// read-only transactions when asked.
func (s Settings) apply(cc *pgx.ConnConfig, g given, a Access) {
	if cc.ConnectTimeout <= 0 {
		cc.ConnectTimeout = s.ConnectTimeout
		if s.ConnectTimeout <= 0 {
			cc.ConnectTimeout = DefaultConnectTimeout
		}
	}
	if !g.statementTimeout {
		st := s.StatementTimeout
		if st == 0 {
			st = DefaultStatementTimeout
		}
		if st > 0 {
			cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(st.Milliseconds(), 10)
		}
	}
	if a != ReadWrite {
		cc.RuntimeParams["default_transaction_read_only"] = "on"
	}
}

func parseErr(dsn string, err error) error {
	return fmt.Errorf("connection string %s: %w", Redact(dsn), Scrub(dsn, err))
}

// SchemaWork are the Settings of a connection that makes or looks over
// the schemas (Init, ewp-ingest init): no statement timeout, since an
// index Init adds to a large existing store may take long, and the
// default connect timeout.
var SchemaWork = Settings{StatementTimeout: -1}
