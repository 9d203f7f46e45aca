package ewp

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ewp-go/ewp"

// stores are the backends of the ledger and the decision log. Each stands
// alone behind its interface (as Litestream's replica clients do): none
// may import another, not even through a third package.
var stores = []string{"ledger/sqlite", "ledger/postgres", "audit/sqlite", "audit/postgres", "audit/memlog"}

// deps is what `go list -deps` lists for pkg within this module, and the
// imports from outside it those packages name (the walk stops at the
// module's edge: modernc.org/sqlite enters the tree only through this
// module's SQLite stores). Test files are not read, build constraints are
// honoured for this platform.
func deps(t *testing.T, pkg string) (inside, outside []string) {
	t.Helper()
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		inside = append(inside, p)
		bp, err := build.ImportDir(filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(p, module), "/")), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				walk(imp)
			} else if !slices.Contains(outside, imp) {
				outside = append(outside, imp)
			}
		}
	}
	walk(module + "/" + pkg)
	return inside, outside
}

// Issue 20's evidence: `go list -deps ./ledger/postgres` holds no
// modernc.org package (the PostgreSQL ledger does not pull in SQLite).
func TestPostgresLedgerPullsInNoSQLite(t *testing.T) {
	inside, outside := deps(t, "ledger/postgres")
	for _, p := range append(inside, outside...) {
		if strings.HasPrefix(p, "modernc.org/") || p == module+"/ledger/sqlite" || p == module+"/audit/sqlite" {
			t.Errorf("ledger/postgres depends on %s", p)
		}
	}
	if !slices.Contains(inside, module+"/ledger") || !slices.Contains(outside, "github.com/jackc/pgx/v5") {
		t.Fatalf("the walk is broken: inside %v, outside %v", inside, outside)
	}
}

// No store imports a sibling store, directly or through another package.
func TestNoStoreImportsAnother(t *testing.T) {
	for _, s := range stores {
		inside, _ := deps(t, s)
		if len(inside) < 2 {
			t.Fatalf("%s: the walk found only %v", s, inside)
		}
		for _, other := range stores {
			if other != s && slices.Contains(inside, module+"/"+other) {
				t.Errorf("%s depends on %s", s, other)
			}
		}
	}
}
