package sources_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/sources"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// Without a ledger there is nothing to show: refused with the flag to set.
func TestForNeedsALedger(t *testing.T) {
	if _, err := sources.For(nil, nil); err == nil || !strings.Contains(err.Error(), "--db") {
		t.Fatalf("got %v, want a refusal naming --db", err)
	}
}

// A log that is not a store (--demo's in-memory one) is the console's Log
// without the store extras; no log leaves Log unset (evidence pages only).
// (Both stores with their extras: the console's page tests, which wire
// through For on SQLite and PostgreSQL.)
func TestApplyWithAndWithoutLog(t *testing.T) {
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mem := memlog.New(nil)
	s, err := sources.For(l, mem)
	if err != nil {
		t.Fatal(err)
	}
	var cfg console.Config
	s.Apply(&cfg)
	if cfg.Evidence == nil || cfg.Graph == nil || cfg.Log != mem || cfg.ListNewest != nil || cfg.LogVerify != nil || cfg.Presented != nil {
		t.Fatalf("with the in-memory log: %+v", cfg)
	}
	s, err = sources.For(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg = console.Config{}
	s.Apply(&cfg)
	if cfg.Evidence == nil || cfg.Log != nil {
		t.Fatalf("without a log: %+v", cfg)
	}
}
