package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ingest"
)

// The two views: a mistyped key and a view with nothing in it.
const (
	typoView = "{\"proposition_id\": \"P-typo\",\n \"asertions\": []}"
	minView  = `{"proposition_id": "P-min"}`
)

// stored reports whether the ledger at db holds a snapshot of prop.
func stored(t *testing.T, db, prop string) bool {
	t.Helper()
	l, err := openReader(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Latest(context.Background(), prop)
	return err == nil
}

// Without --strict, both views are stored (the protocol allows them) and
// each is warned about: the unknown key with its file, line, pointer and
// nearest known key; the empty view. The exit code stays 0.
func TestUnknownKeysAndEmptyViewsWarn(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ewp.sqlite")
	typo, min := writeFile(t, dir, "typo.json", typoView), writeFile(t, dir, "min.json", minView)
	code, out, errs := runCLI(t, "", "--db", db, typo, min)
	if code != ingest.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		typo + `: line 2: warning: EWP_INGEST_UNKNOWN_KEY: /asertions: unknown key "asertions" (did you mean "assertions"?)`,
		typo + `: line 1: warning: EWP_INGEST_EMPTY_VIEW: the view of "P-typo" holds no assertions`,
		min + `: line 1: warning: EWP_INGEST_EMPTY_VIEW: the view of "P-min"`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "3 warnings") {
		t.Errorf("the summary does not count the warnings:\n%s", out)
	}
	if !stored(t, db, "P-typo") || !stored(t, db, "P-min") {
		t.Fatal("without --strict the views are stored")
	}
	// --json lists them with their pointer, per file.
	code, out, _ = runCLI(t, "", "--db", db, "--json", typo)
	var rep struct {
		Warnings int `json:"warnings"`
		Files    []struct {
			Warnings []struct {
				Code    string `json:"error"`
				Pointer string `json:"pointer"`
				Line    int    `json:"line"`
			} `json:"warnings"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
	if rep.Warnings != 2 || len(rep.Files) != 1 || len(rep.Files[0].Warnings) != 2 ||
		rep.Files[0].Warnings[0].Pointer != "/asertions" || rep.Files[0].Warnings[0].Line != 2 {
		t.Fatalf("json warnings: %+v", rep)
	}
}

// --strict refuses such views with the existing refusal rules: a file
// with one is not stored at all (exit 3) while the run's other files are;
// with --partial the file's other views are stored (exit 1); a stream
// stops at it.
func TestStrictRefuses(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ewp.sqlite")
	good := writeFile(t, dir, "good.json", view("P-good", "v1", "model"))
	typo := writeFile(t, dir, "typo.json", typoView)
	code, _, errs := runCLI(t, "", "--db", db, "--strict", good, typo)
	if code != ingest.ExitRefused || !strings.Contains(errs, typo+": EWP_INGEST_UNKNOWN_KEY: /asertions: unknown key") || !strings.Contains(errs, "--strict refuses") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !stored(t, db, "P-good") || stored(t, db, "P-typo") {
		t.Fatal("--strict: the good file is stored, the refused one is not")
	}
	list := writeFile(t, dir, "list.json", "["+view("P-list", "v1", "model")+",\n"+minView+"]")
	if code, _, errs := runCLI(t, "", "--db", db, "--strict", "--partial", list); code != ingest.ExitPartial || !strings.Contains(errs, "EWP_INGEST_EMPTY_VIEW") {
		t.Fatalf("--strict --partial: exit %d\n%s", code, errs)
	}
	if !stored(t, db, "P-list") || stored(t, db, "P-min") {
		t.Fatal("--strict --partial: the valid view is stored, the empty one is not")
	}
	code, _, errs = runCLI(t, view("P-s1", "v1", "model")+"\n"+minView+"\n"+view("P-s2", "v1", "model")+"\n", "--db", db, "--strict", "-")
	if code != ingest.ExitRefused || !stored(t, db, "P-s1") || stored(t, db, "P-min") || stored(t, db, "P-s2") {
		t.Fatalf("--strict stream: exit %d\n%s", code, errs)
	}
}

// A load that stores nothing into a ledger it created does not leave the
// new file behind (a mistyped --db), and says so with its full path; one
// that stores something says where the new ledger is. init makes an
// empty one on purpose.
func TestNewLedgerKeptOnlyWithSomethingInIt(t *testing.T) {
	dir := t.TempDir()
	typoDB := filepath.Join(dir, "ewp.sqlitee")
	bad := writeFile(t, dir, "bad.json", `{"proposition_id": ""}`)
	for _, c := range []struct{ stdin, file string }{{"", bad}, {"[]", "-"}} {
		code, _, errs := runCLI(t, c.stdin, "--db", typoDB, c.file)
		if _, err := os.Stat(typoDB); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: a new ledger with nothing stored was kept (exit %d)\n%s", c.file, code, errs)
		}
		if !strings.Contains(errs, "nothing was stored, so the new ledger "+typoDB+" was not kept") {
			t.Fatalf("%s: stderr does not say so:\n%s", c.file, errs)
		}
	}
	t.Chdir(dir)
	code, _, errs := runCLI(t, "", "--db", "new.sqlite", writeFile(t, dir, "v.json", view("P-1", "v1", "model")))
	if code != 0 || !strings.Contains(errs, "created the ledger "+filepath.Join(dir, "new.sqlite")) {
		t.Fatalf("exit %d, want the new ledger's absolute path:\n%s", code, errs)
	}
	if code, out, errs := runCLI(t, "", "init", "--db", "empty.sqlite"); code != 0 || !strings.Contains(out, "created, empty") {
		t.Fatalf("init: exit %d %s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "empty.sqlite")); err != nil {
		t.Fatal(err)
	}
}

// A directory as --db is named as such, not answered with SQLite's I/O
// error.
func TestDirectoryAsLedger(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "", "--db", dir, writeFile(t, dir, "v.json", view("P-1", "v1", "model")))
	if code != ingest.ExitLedger || !strings.Contains(errs, dir+" is a directory, not a ledger file: name a file in it, e.g. "+filepath.Join(dir, "ewp.sqlite")) || strings.Contains(errs, "I/O") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
}
