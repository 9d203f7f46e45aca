package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ewp-go/ewp/audit"
)

// hostile is a pending decision whose agent-supplied strings would act on
// a terminal printed raw: backspaces that make delete_all_backups read as
// read_status, a newline that forges a row, an OSC sequence that retitles
// the window, a bidi override, a C1 CSI and invalid UTF-8.
func hostile() *audit.Decision {
	d := pending("P-\u202eevil", 1)
	d.ActionKind = "delete_all_backups" + strings.Repeat("\b", 18) + "read_status"
	d.ActionID = "a\n2026-01-01T00:00:00Z  forged  may_act  MAY_ACT"
	d.Caller.ClientName = "\x1b]0;owned\x07claude"
	d.ToolName = "sh\u009b2J"
	d.IdempotencyKey = "k\xff"
	d.Layers[0].Reasons = []string{"ok\r\x1b[2Kfine"}
	return d
}

// inert fails unless text holds no character a terminal acts on or that
// reorders text: only newlines (the output's own) among the controls.
func inert(t *testing.T, what, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s: invalid UTF-8 printed:\n%q", what, text)
	}
	for _, r := range text {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == '\u202e' {
			t.Errorf("%s: printed %U raw:\n%q", what, r, text)
			return
		}
	}
}

func TestAgentTextIsEscaped(t *testing.T) {
	db, ds := seeded(t, hostile())
	id := ds[0].ID

	out, _ := wantExit(t, 0, "list", "--db", db)
	inert(t, "list", out)
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("list printed %d lines for one decision (a forged row):\n%s", n, out)
	}
	for _, want := range []string{`delete_all_backups\x08`, `a\n2026-01-01`, `P-\u202eevil`} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}

	out, _ = wantExit(t, 0, "show", "--db", db, id)
	inert(t, "show", out)
	for _, want := range []string{`kind=delete_all_backups\x08`, `\x1b]0;owned\x07claude`, `sh\u009b2J`, `ok\r\x1b[2Kfine`} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}

	for _, args := range [][]string{{"list", "--db", db, "--json"}, {"show", "--db", db, id, "--json"}, {"export", "--db", db}} {
		out, _ := wantExit(t, 0, args...)
		inert(t, strings.Join(args, " "), strings.ReplaceAll(out, "\n", " "))
		if !strings.Contains(out, `\u202e`) {
			t.Errorf("%v: the bidi override is not escaped:\n%s", args, out)
		}
	}
	out, _ = wantExit(t, 0, "export", "--db", db)
	var back audit.Decision
	if err := json.Unmarshal([]byte(out), &back); err != nil || back.ActionKind != ds[0].ActionKind || back.PropositionID != ds[0].PropositionID {
		t.Errorf("export no longer decodes to what was recorded: %v\n%s", err, out)
	}

	// Errors quote what they were given, escaped too.
	_, errs := wantExit(t, exitNotFound, "show", "--db", db, "x\x1b[31mred")
	inert(t, "show's error", errs)

	out, _ = wantExit(t, 0, "approve", "--db", db, id, "--once", "--key", opKey("alice"))
	inert(t, "approve", out)
	if !strings.Contains(out, `kind=delete_all_backups\x08`) {
		t.Errorf("approve does not print the action escaped:\n%s", out)
	}
}

func TestApproverRefusesControlCharacters(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1))
	for _, name := range []string{"alice\nbob", "ali\x1b[2Jce", "\u202eecila", "al\xffice"} {
		for _, args := range [][]string{
			{"approve", "--db", db, ds[0].ID, "--once", "--key", opKey("alice"), "--approver", name},
			{"reject", "--db", db, ds[0].ID, "--note", "no", "--key", opKey("alice"), "--approver", name},
			{"reject", "--db", db, "--stale", "1h", "--note", "no", "--key", opKey("alice"), "--approver", name},
		} {
			_, errs := wantExit(t, exitUsage, args...)
			inert(t, "refusal", errs)
			if !strings.Contains(errs, "--approver") || !strings.Contains(errs, "control or format characters") {
				t.Errorf("%q: %s", name, errs)
			}
		}
	}
	// The key's NAME/SOMEONE form lets the rest be any printable name.
	for _, name := range []string{"alice/\x1b]0;owned\x07", "alice/\u202eecila"} {
		_, errs := wantExit(t, exitUsage, "approve", "--db", db, ds[0].ID, "--once", "--key", opKey("alice"), "--approver", name)
		if !strings.Contains(errs, "control or format characters") {
			t.Errorf("%q: %s", name, errs)
		}
	}
	wantExit(t, 0, "approve", "--db", db, ds[0].ID, "--once", "--key", opKey("alice"), "--approver", `alice/Zoë O'Neil \ ops`)
}

// TestShowPrintsArguments: show prints the arguments the operator is
// approving (as recorded: redacted, bounded), line by line, escaped.
func TestShowPrintsArguments(t *testing.T) {
	d := pending("P-db", 1)
	d.Arguments = []byte(`{"path":"protected/other.txt","token":"[redacted]","x":"a\u001b]0;owned\u0007\u202eb"}`)
	cut := pending("P-db", 2)
	cut.Arguments, cut.ArgumentsTruncated = []byte(`"{\"script\":\"rm -rf /srv/backups"`), true
	db, ds := seeded(t, d, cut)
	out, _ := wantExit(t, 0, "show", "--db", db, ds[0].ID)
	inert(t, "show", out)
	for _, want := range []string{"  arguments    {\n", `    "path": "protected/other.txt",`, `"token": "[redacted]"`, `a\u001b]0;owned\u0007\u202eb`} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out, _ = wantExit(t, 0, "show", "--db", db, ds[1].ID)
	if !strings.Contains(out, `{"script":"rm -rf /srv/backups…`) || !strings.Contains(out, "only the start of the arguments is recorded") {
		t.Errorf("show of cut arguments:\n%s", out)
	}
}
