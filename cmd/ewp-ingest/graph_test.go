package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/testskip"
	"github.com/ewp-go/ewp/store"
)

// packFile returns a file of ../shared/vre-pack beside the repository, or
// skips: the pack is read at run time, never copied into the repository.
func packFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "vre-pack", name)
	if _, err := os.Stat(p); err != nil {
		t.Skip(testskip.Message(testskip.Shared, fmt.Sprintf("vre-pack not found (%v)", err)))
	}
	return p
}

// graphLen reads the stored graph back through the store the server uses.
func graphLen(t *testing.T, db string) int {
	t.Helper()
	if _, err := os.Stat(db); !store.IsPostgres(db) && errors.Is(err, fs.ErrNotExist) {
		return 0 // a new ledger that nothing was stored in is not kept
	}
	l, err := openReader(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g, _, err := graphstore.New(l, nil).Graph(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return g.Len()
}

func TestGraphDocumentsLoad(t *testing.T) { eachStore(t, testGraphDocumentsLoad) }

func testGraphDocumentsLoad(t *testing.T, kind string) {
	db := freshDB(t, kind)
	for _, tc := range []struct {
		file, want string
		total      int
	}{
		{packFile(t, "filesystem.json"), "filesystem: 20 primitives (20 added, 0 revised, 0 unchanged)", 20},
		{packFile(t, "filesystem.json"), "filesystem: 20 primitives (0 added, 0 revised, 20 unchanged)", 20},
		// The demo graph shares nine names with the pack graph: those are
		// revised, protected_path is new.
		{filepath.Join("..", "..", "fixtures", "graphs", "filesystem-demo.json"), "filesystem-demo: 10 primitives (1 added, 9 revised, 0 unchanged)", 21},
	} {
		code, out, errs := runCLI(t, "", "--db", db, tc.file)
		if code != ingest.ExitOK || !strings.Contains(out, "graph: "+tc.want) {
			t.Fatalf("%s: exit %d\n%s%s", tc.file, code, out, errs)
		}
		if n := graphLen(t, db); n != tc.total {
			t.Fatalf("%s: graph has %d primitives, want %d", tc.file, n, tc.total)
		}
	}
	code, out, _ := runCLI(t, "", "verify", "--db", db)
	if code != ingest.ExitOK || !strings.Contains(out, "ok: checked 30 events (0 snapshots, 30 primitive revisions)") {
		t.Fatalf("verify: exit %d %s", code, out)
	}
}

func TestGapsGraphLoads(t *testing.T) { eachStore(t, testGapsGraphLoads) }

func testGapsGraphLoads(t *testing.T, kind string) {
	db := freshDB(t, kind)
	code, out, errs := runCLI(t, "", "--db", db, packFile(t, "gaps.json"))
	if code != ingest.ExitOK || !strings.Contains(out, "gaps: 10 primitives (10 added") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// A refused document writes nothing, and the refusal names the primitive,
// the depth and the rule.
func TestGraphDocumentRefusedWhole(t *testing.T) { eachStore(t, testGraphDocumentRefusedWhole) }

func testGraphDocumentRefusedWhole(t *testing.T, kind string) {
	dir := t.TempDir()
	db := freshDB(t, kind)
	good := `{"name": "ok", "depths": [{"level": 0}]}`
	dep := func(name, target string) string {
		return `{"name": "` + name + `", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "x"},
		"relata": [{"type": "REQUIRES", "target": "` + target + `", "target_depth": 1}]}]}`
	}
	cases := []struct{ name, doc, want string }{
		{"cycle", `{"graph": "g", "primitives": [` + good + `,` + dep("a", "b") + `,` + dep("b", "a") + `]}`,
			`primitives[1].depths[1].relata[0]: primitive "a" D1 IDENTITY: REQUIRES "b" closes a transitive cycle`},
		{"unknown target", `{"graph": "g", "primitives": [` + good + `,` + dep("a", "nowhere") + `]}`, "(unknown_target)"},
		{"level 5", `{"graph": "g", "primitives": [` + good + `, {"name": "x", "depths": [{"level": 5}]}]}`, "primitives[1].depths[0].level"},
		{"bad relation", `{"graph": "g", "primitives": [` + good + `, {"name": "x", "depths": [{"level": 0, "relata": [{"type": "CAUSES", "target": "ok", "target_depth": 0}]}]}]}`, "CAUSES"},
		{"folded duplicate", `{"graph": "g", "primitives": [{"name": "Straße", "depths": [{"level": 0}]}, {"name": "STRASSE", "depths": [{"level": 0}]}]}`, "(duplicate_name)"},
		{"self reference", `{"graph": "g", "primitives": [` + good + `,` + dep("a", "a") + `]}`, "(self_reference)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, dir, tc.name+".json", tc.doc)
			code, _, errs := runCLI(t, "", "--db", db, f)
			if code != ingest.ExitRefused || !strings.Contains(errs, "EWP_REFUSE_INVALID_GRAPH") || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, want refusal naming %q:\n%s", code, tc.want, errs)
			}
			if n := graphLen(t, db); n != 0 {
				t.Fatalf("a refused document left %d primitives behind", n)
			}
		})
	}
}
