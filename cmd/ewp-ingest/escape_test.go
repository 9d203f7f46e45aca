package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReportEscapesInputText: ids from an input file reach the report's
// text (the warrants, refusals that quote them) escaped, so a view cannot
// write on the terminal of the person loading it; the JSON report keeps
// the same values with the dangerous characters as \u escapes.
func TestReportEscapesInputText(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ewp.db")
	evil := `P-\u001b]0;owned\u0007\u202eevil\u009b2J`
	in := writeFile(t, dir, "in.jsonl", view(evil, "v1", "user_asserted")+"\n"+view(evil, "v1\nforged", "nope")+"\n")
	for _, args := range [][]string{{"--db", db, "--partial", in}, {"--db", db, "--partial", "--json", in}} {
		_, out, errs := runCLI(t, "", args...)
		for _, text := range []string{out, errs} {
			for _, r := range strings.ReplaceAll(text, "\n", " ") {
				if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u202e' {
					t.Fatalf("%v printed %U raw:\nstdout %q\nstderr %q", args, r, out, errs)
				}
			}
		}
		if !strings.Contains(out+errs, `\u202e`) {
			t.Errorf("%v: the id is not shown escaped:\nstdout %s\nstderr %s", args, out, errs)
		}
	}
}

// TestIncompleteJSONLinesView: a view left open at the end of line 2 is
// refused as line 2, and the views on lines 1, 3 and 4 are stored.
func TestIncompleteJSONLinesView(t *testing.T) {
	dir := t.TempDir()
	one := func(p string) string { return strings.ReplaceAll(view(p, "v1", "user_asserted"), "\n", "") }
	in := writeFile(t, dir, "in.jsonl", one("P-1")+"\n{\"x\": \n"+one("P-3")+"\n"+one("P-4")+"\n")
	code, out, errs := runCLI(t, "", "--db", filepath.Join(dir, "ewp.db"), "--partial", in)
	if code != 1 || !strings.Contains(errs, "in.jsonl: line 2: ") || strings.Contains(errs, "line 4") || !strings.Contains(out, "3 stored") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
