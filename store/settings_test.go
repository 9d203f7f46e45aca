package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/store"
)

// TestOneURLConfiguresBothStores: the settings one --db URL gives
// (pool_max_conns, connect_timeout, statement_timeout) configure the
// ledger's pool and the decision log's alike, and win over both stores'
// options (the log used to replace them with its own).
func TestOneURLConfiguresBothStores(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	if strings.Contains(url, "?") {
		url += "&"
	} else {
		url += "?"
	}
	url += "pool_max_conns=3&connect_timeout=7&statement_timeout=4321"
	options := pgurl.Settings{PoolSize: 8, StatementTimeout: time.Second, ConnectTimeout: time.Second}
	l, err := store.Open(ctx, url, store.Options{Create: true, Postgres: postgres.Options{Settings: options}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	log, err := auditpg.Open(ctx, url, auditpg.Options{Settings: options})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for name, pool := range map[string]*pgxpool.Pool{"ledger": l.(*postgres.Ledger).Pool(), "decision log": log.Pool()} {
		cfg := pool.Config()
		var st string
		if err := pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&st); err != nil {
			t.Fatal(err)
		}
		if cfg.MaxConns != 3 || cfg.ConnConfig.ConnectTimeout != 7*time.Second || st != "4321ms" {
			t.Errorf("%s: pool_max_conns %d, connect_timeout %v, statement_timeout %s; want the URL's 3, 7s, 4321ms",
				name, cfg.MaxConns, cfg.ConnConfig.ConnectTimeout, st)
		}
	}
}
