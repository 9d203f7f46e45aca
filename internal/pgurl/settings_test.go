package pgurl

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// clearPGEnv keeps the environment pgx reads out of a test's parse.
func clearPGEnv(t *testing.T) {
	for _, env := range []string{"PGCONNECT_TIMEOUT", "PGSERVICE", "PGSERVICEFILE", "PGOPTIONS"} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
}

// TestURLSettingsWin: pool_max_conns, connect_timeout and
// statement_timeout given in the URL hold whatever the Settings say;
// Settings fill what the URL leaves out, and the package defaults what
// both leave out. ReadOnly always applies.
func TestURLSettingsWin(t *testing.T) {
	clearPGEnv(t)
	explicit := Settings{PoolSize: 9, StatementTimeout: 2 * time.Second, ConnectTimeout: 3 * time.Second}
	for _, c := range []struct {
		name      string
		url       string
		s         Settings
		pool      int32
		connect   time.Duration
		statement string
	}{
		{"the URL's over Settings", "postgres://u@db/ewp?pool_max_conns=3&connect_timeout=7&statement_timeout=1234", explicit, 3, 7 * time.Second, "1234"},
		{"the URL's over defaults", "postgres://u@db/ewp?pool_max_conns=3&connect_timeout=7&statement_timeout=1234", Settings{}, 3, 7 * time.Second, "1234"},
		{"Settings where the URL is silent", "postgres://u@db/ewp", explicit, 9, 3 * time.Second, "2000"},
		{"defaults where both are silent", "postgres://u@db/ewp", Settings{}, int32(DefaultPoolSize()), DefaultConnectTimeout, "30000"},
		{"connect_timeout=0 is not a setting", "postgres://u@db/ewp?connect_timeout=0", Settings{}, int32(DefaultPoolSize()), DefaultConnectTimeout, "30000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := PoolConfig(c.url, c.s, ReadWrite)
			if err != nil {
				t.Fatal(err)
			}
			cc := cfg.ConnConfig
			if cfg.MaxConns != c.pool || cc.ConnectTimeout != c.connect || cc.RuntimeParams["statement_timeout"] != c.statement {
				t.Fatalf("pool %d, connect timeout %v, statement_timeout %q; want %d, %v, %q",
					cfg.MaxConns, cc.ConnectTimeout, cc.RuntimeParams["statement_timeout"], c.pool, c.connect, c.statement)
			}
			if ro, set := cc.RuntimeParams["default_transaction_read_only"]; set {
				t.Fatalf("default_transaction_read_only %q on ReadWrite connections", ro)
			}
			one, err := ConnConfig(c.url, c.s, ReadWrite)
			if err != nil {
				t.Fatal(err)
			}
			if _, sent := one.RuntimeParams["pool_max_conns"]; sent {
				t.Fatal("a single connection sends pool_max_conns, which the server refuses")
			}
			if one.ConnectTimeout != cc.ConnectTimeout || one.RuntimeParams["statement_timeout"] != cc.RuntimeParams["statement_timeout"] {
				t.Fatalf("a single connection: connect timeout %v, statement_timeout %q; the pool's %v, %q",
					one.ConnectTimeout, one.RuntimeParams["statement_timeout"], cc.ConnectTimeout, cc.RuntimeParams["statement_timeout"])
			}
		})
	}
}

// TestNoStatementTimeout: a negative StatementTimeout sends none, unless
// the URL gives one.
func TestNoStatementTimeout(t *testing.T) {
	clearPGEnv(t)
	cfg, err := PoolConfig("postgres://u@db/ewp", SchemaWork, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := cfg.ConnConfig.RuntimeParams["statement_timeout"]; ok {
		t.Fatalf("statement_timeout %q sent; want none", st)
	}
	if cfg.ConnConfig.ConnectTimeout != DefaultConnectTimeout {
		t.Fatalf("connect timeout %v; want the default %v", cfg.ConnConfig.ConnectTimeout, DefaultConnectTimeout)
	}
	cfg, err = PoolConfig("postgres://u@db/ewp?statement_timeout=500", SchemaWork, ReadWrite)
	if err != nil || cfg.ConnConfig.RuntimeParams["statement_timeout"] != "500" {
		t.Fatalf("the URL's statement_timeout: %v, %v", cfg.ConnConfig.RuntimeParams, err)
	}
}

// TestSettingsFromTheEnvironmentCount: PGCONNECT_TIMEOUT, which pgx
// reads, is a setting given as much as connect_timeout in the URL.
func TestSettingsFromTheEnvironmentCount(t *testing.T) {
	clearPGEnv(t)
	t.Setenv("PGCONNECT_TIMEOUT", "11")
	cfg, err := PoolConfig("postgres://u@db/ewp", Settings{ConnectTimeout: time.Second}, ReadWrite)
	if err != nil || cfg.ConnConfig.ConnectTimeout != 11*time.Second {
		t.Fatalf("connect timeout %v, %v; want PGCONNECT_TIMEOUT's 11s", cfg.ConnConfig.ConnectTimeout, err)
	}
}

// TestSettingsErrorsKeepSecrets: a URL pgx refuses is named redacted, and
// a failed connection's error carries no password.
func TestSettingsErrorsKeepSecrets(t *testing.T) {
	clearPGEnv(t)
	for _, url := range []string{
		"postgres://u:hunter2@db/ewp?pool_max_conns=many",
		"postgres://u:hunter2@db/ewp?connect_timeout=soon",
	} {
		_, err := PoolConfig(url, Settings{}, ReadWrite)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), Mask) {
			t.Fatalf("PoolConfig(%s): %v; want an error naming the URL redacted", Redact(url), err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Connect(ctx, "postgres://u:hunter2@127.0.0.1:1/ewp?sslmode=disable&connect_timeout=1", Settings{}, ReadWrite)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Connect to a closed port: %v; want an error without the password", err)
	}
}

// TestReadOnlyWhateverTheURLSays: ReadOnly (and Access's zero value, on
// the safe side) sets read-only transactions over the URL's own
// default_transaction_read_only; ReadWrite leaves the URL's.
func TestReadOnlyWhateverTheURLSays(t *testing.T) {
	clearPGEnv(t)
	url := "postgres://u@db/ewp?default_transaction_read_only=off"
	for _, c := range []struct {
		a    Access
		want string
	}{{ReadOnly, "on"}, {0, "on"}, {ReadWrite, "off"}} {
		cfg, err := PoolConfig(url, Settings{}, c.a)
		if err != nil {
			t.Fatal(err)
		}
		one, err := ConnConfig(url, Settings{}, c.a)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []string{cfg.ConnConfig.RuntimeParams["default_transaction_read_only"], one.RuntimeParams["default_transaction_read_only"]} {
			if got != c.want {
				t.Fatalf("Access %d: default_transaction_read_only %q, want %q", c.a, got, c.want)
			}
		}
	}
}

// TestLockKeysDiffer: the stores' advisory lock keys are distinct, so no
// store waits on another's lock by accident.
func TestLockKeysDiffer(t *testing.T) {
	keys := map[int64]string{}
	for name, k := range map[string]int64{"LockLedgerChain": LockLedgerChain, "LockInit": LockInit, "LockLogChain": LockLogChain} {
		if other, dup := keys[k]; dup {
			t.Fatalf("%s and %s share key %#x", name, other, k)
		}
		keys[k] = name
	}
}
