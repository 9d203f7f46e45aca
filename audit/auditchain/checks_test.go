package auditchain

import (
	"errors"
	"strings"
	"testing"
)

// Found refuses a trigger the schema lacks or one altered; Missing names
// what was never found, with its table.
func TestTriggers(t *testing.T) {
	want := func() map[string]string {
		return map[string]string{"approval_uses_no_change": "A", "events_no_change": "E"}
	}
	c := NewTriggers(want())
	if brk := c.Found("extra_no_x", "extra", "X"); brk == nil || !strings.Contains(brk.What, "someone added it") {
		t.Fatalf("added trigger: %v", brk)
	}
	if brk := c.Found("events_no_change", "events", "E2"); brk == nil || !strings.Contains(brk.What, "altered") {
		t.Fatalf("altered trigger: %v", brk)
	}
	c = NewTriggers(want())
	if brk := c.Found("events_no_change", "events", "E"); brk != nil {
		t.Fatal(brk)
	}
	brk := c.Missing()
	if brk == nil || brk.Table != "approval_uses" || !strings.Contains(brk.What, "approval_uses_no_change is missing") {
		t.Fatalf("missing trigger: %+v", brk)
	}
	c.Found("approval_uses_no_change", "approval_uses", "A")
	if brk := c.Missing(); brk != nil {
		t.Fatalf("all found: %v", brk)
	}
}

// RunChecks stops at the first Break (recorded and returned) or I/O
// error (through fail), and Orphans asks for the first orphan only of a
// table with more rows than the walk counted.
func TestRunChecksAndOrphans(t *testing.T) {
	var rep VerifyReport
	w := NewWalker(&rep, nil)
	asked := ""
	orphans := func() (*Break, error) {
		return w.Orphans(ChainedTables, func(tbl string) (int64, error) {
			if tbl == TableApprovals {
				return 1, nil
			}
			return 0, nil
		}, func(tbl string) (int64, error) { asked = tbl; return 5, nil })
	}
	never := func() (*Break, error) { t.Fatal("ran after a break"); return nil, nil }
	err := RunChecks(&rep, func(err error) error { return err }, orphans, never)
	var brk *Break
	if !errors.As(err, &brk) || rep.Broken != brk || brk.Table != TableApprovals || brk.RowSeq != 5 || asked != TableApprovals {
		t.Fatalf("err %v, broken %+v, asked %q", err, rep.Broken, asked)
	}
	io := errors.New("disk")
	err = RunChecks(&VerifyReport{}, func(err error) error { return errors.Join(errors.New("store"), err) },
		func() (*Break, error) { return nil, io }, never)
	if !errors.Is(err, io) || !strings.Contains(err.Error(), "store") {
		t.Fatalf("I/O error: %v", err)
	}
}

// Genesis is a fresh slice each time: writing through one caller's copy
// moves no chain's start.
func TestGenesisCannotBeChanged(t *testing.T) {
	g := Genesis()
	g[0] = 0xff
	if again := Genesis(); len(again) != 32 || again[0] != 0 {
		t.Fatalf("Genesis() = %x after a caller wrote to its copy", again)
	}
}
