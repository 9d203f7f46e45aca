package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(args []string, stdin string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// The exit status is the contract CI relies on: 0 conformant, 1 not, 2
// when the pack cannot be read or the command line is wrong.
func TestExitStatus(t *testing.T) {
	if code, out, _ := runCmd([]string{"--pack", "../../fixtures/pack"}, ""); code != 0 || !strings.Contains(out, "Result: CONFORMANT") {
		t.Fatalf("own pack: exit %d\n%s", code, out)
	}
	if code, _, errs := runCmd([]string{"--pack", t.TempDir()}, ""); code != 2 || !strings.Contains(errs, "no fixtures/") {
		t.Errorf("empty pack dir: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runCmd([]string{"--bogus"}, ""); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, _, _ := runCmd([]string{"eval", "extra"}, ""); code != 2 {
		t.Errorf("eval with an argument: exit %d", code)
	}
}

// A pack whose expectation is wrong is NONCONFORMANT and names the field.
func TestNonconformantPack(t *testing.T) {
	dir := t.TempDir()
	doc := `{"proposition_id":"P","evaluated_at":"2026-01-01T00:00:00Z"}`
	want := `{"acceptance":"ACCEPTED","conflict":"NONE","verification":"NONE","currency":"CURRENT","sufficiency":"INSUFFICIENT"}`
	for path, body := range map[string]string{"fixtures/x.json": doc, "expected/x.json": want} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := runCmd([]string{"--pack", dir}, "")
	if code != 1 || !strings.Contains(out, "Result: NONCONFORMANT") || !strings.Contains(out, `acceptance: expected "ACCEPTED", got "UNACCEPTED"`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestEvalModeAnswersEachLine(t *testing.T) {
	code, out, _ := runCmd([]string{"eval"}, "{\"proposition_id\":\"P\",\"evaluated_at\":\"2026-01-01\"}\nnot json\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"acceptance":"UNACCEPTED"`) || !strings.Contains(lines[1], `"refused":true`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
