package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 19 item 3: a scope that names nothing but its proposition is
// refused, and so is an until past the maximum lifetime.
func TestApproveRefusesAnEmptyScopeAndAFarUntil(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1))
	id := ds[0].ID
	_, errs := wantExit(t, exitUsage, "approve", id, "--db", db, "--scope", "--until", "2h", "--key", opKey("alice"))
	if !strings.Contains(errs, "--scope-kind, --scope-tool, --scope-concepts") {
		t.Errorf("empty scope: %s", errs)
	}
	_, errs = wantExit(t, exitUsage, "approve", id, "--db", db, "--once", "--until", "9999-12-31T00:00:00Z", "--key", opKey("alice"))
	if !strings.Contains(errs, "maximum 24h0m0s") || !strings.Contains(errs, "--max-lifetime") {
		t.Errorf("until 9999: %s", errs)
	}
	_, errs = wantExit(t, exitUsage, "approve", id, "--db", db, "--scope", "--scope-kind", "migrate", "--until", "25h", "--key", opKey("alice"))
	if !strings.Contains(errs, "maximum 24h0m0s") {
		t.Errorf("scope until 25h: %s", errs)
	}
	wantExit(t, exitOK, "approve", id, "--db", db, "--scope", "--scope-kind", "migrate", "--until", "25h", "--max-lifetime", "48h", "--key", opKey("alice"))
}

// Issue 19 item 6: a guard-only decision (no proposition, the demo's
// protected-file deletion) can be approved within a scope of tool and
// concepts.
func TestScopeForAGuardOnlyDecision(t *testing.T) {
	d := pending("", 1)
	d.PropositionID, d.ViewID, d.ViewHash, d.ActionKind, d.ToolName, d.Concepts = "", "", "", "delete", "rm", []string{"delete", "file"}
	d.Cardinality, d.MinDepth = "multiple", new(1)
	db, ds := seeded(t, d)
	out, errs := wantExit(t, exitOK, "approve", ds[0].ID, "--db", db, "--scope-tool", "rm", "--scope-concepts", "delete,file",
		"--until", "2h", "--key", opKey("alice"))
	if !strings.Contains(out, "calls naming no proposition") || !strings.Contains(out, "tool rm") || !strings.Contains(out, "cardinality=multiple min_depth=1") {
		t.Errorf("approve:\n%s%s", out, errs)
	}
}

// Issue 19 item 7: identical retries of one pending call are one row with
// a count; answering it closes the older ones; reject --stale rejects
// what waited too long, with a note.
func TestPendingRetriesAreOneItem(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1), pending("P-db", 1), pending("P-db", 1), pending("P-db", 2))
	out, _ := wantExit(t, exitOK, "list", "--db", db, "--pending")
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, ds[2].ID) || strings.Contains(out, ds[0].ID) || !strings.Contains(out, "asked 3 times") {
		t.Fatalf("list --pending: want two rows, the retries as one asked 3 times:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "list", "--db", db, "--pending", "--json")
	var page struct{ Decisions []listRow }
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Decisions) != 2 {
		t.Fatalf("list --pending --json: %v\n%s", err, out)
	}
	for _, r := range page.Decisions {
		if r.ID == ds[2].ID && (r.Count != 3 || strings.Join(r.Older, " ") != ds[0].ID+" "+ds[1].ID) {
			t.Errorf("group row %+v", r)
		}
	}

	out, _ = wantExit(t, exitOK, "approve", ds[2].ID, "--db", db, "--once", "--key", opKey("alice"))
	if !strings.Contains(out, "closed 2 identical older call(s)") {
		t.Errorf("approve:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "show", "--db", db, ds[0].ID)
	if !strings.Contains(out, "superseded") || !strings.Contains(out, ds[2].ID) {
		t.Errorf("an older retry is not closed as superseded:\n%s", out)
	}

	_, errs := wantExit(t, exitUsage, "reject", "--db", db, "--stale", "1ns", "--key", opKey("alice"))
	if !strings.Contains(errs, "--note") {
		t.Errorf("reject --stale without a note: %s", errs)
	}
	out, _ = wantExit(t, exitOK, "reject", "--db", db, "--stale", "1ns", "--key", opKey("alice"), "--note", "stale; ask again")
	if !strings.Contains(out, "rejected 1 pending") {
		t.Errorf("reject --stale:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "list", "--db", db, "--pending")
	if !strings.Contains(out, "no decisions match") {
		t.Errorf("pending after reject --stale:\n%s", out)
	}
}
