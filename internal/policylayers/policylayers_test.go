package policylayers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/budget"
	"github.com/ewp-go/ewp/callpolicy"
)

// plainLog is an audit.Log that keeps no counts; countingLog keeps them.
type plainLog struct{ audit.Log }

type countingLog struct{ audit.Log }

func (countingLog) Add(context.Context, string, time.Time, int64) (int64, error) { return 1, nil }

// wrapped hides its inner log's methods but for Unwrap, as audit/notify does.
type wrapped struct{ audit.Log }

func (w wrapped) Unwrap() audit.Log { return w.Log }

func TestBuildFindsCountersThroughAWrapper(t *testing.T) {
	bud := write(t, "budgets.json", `{"default":{"calls_per_minute":60}}`)
	if _, err := Build(Files{Budgets: bud}, wrapped{wrapped{countingLog{}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(Files{Budgets: bud}, wrapped{plainLog{}}, nil); err == nil {
		t.Fatal("a wrapped log without counts was taken")
	}
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuild(t *testing.T) {
	pol := write(t, "calls.cedar", `@id("p") forbid (principal, action, resource == Tool::"x/y");`)
	bud := write(t, "budgets.json", `{"default":{"calls_per_minute":60}}`)
	b, err := Build(Files{CallPolicies: pol, Budgets: bud}, countingLog{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Layers) != 2 || b.Layers[0].Name() != callpolicy.LayerName || b.Layers[1].Name() != budget.LayerName {
		t.Fatalf("layers %v", b.Layers)
	}
	if b.CallPolicies.Len() != 1 || b.Budgets.Default == nil {
		t.Fatalf("built %+v", b)
	}
	if b, err := Build(Files{}, nil, nil); err != nil || len(b.Layers) != 0 {
		t.Fatalf("no files: %+v %v", b, err)
	}
}

func TestBuildErrors(t *testing.T) {
	bud := write(t, "budgets.json", `{"default":{"calls_per_minute":60}}`)
	for _, tc := range []struct {
		f    Files
		log  audit.Log
		want string
	}{
		{Files{CallPolicies: filepath.Join(t.TempDir(), "none.cedar")}, nil, "call policies: open"},
		{Files{CallPolicies: write(t, "p.cedar", `@id("p") permit (principal, action, resource);`)}, nil, "the call-policy file is not valid:\n"},
		{Files{CallPolicies: write(t, "big.cedar", strings.Repeat(" ", callpolicy.MaxFileBytes+1))}, nil, "bytes; the limit is 1048576"},
		{Files{Budgets: bud}, nil, "budgets need a decision log to keep their counts in (not --audit off)"},
		{Files{Budgets: bud}, plainLog{}, "budgets need a decision log that keeps counts (SQLite or PostgreSQL); this one (policylayers.plainLog) does not"},
		{Files{Budgets: write(t, "b.json", `{"agents":{"bot":{"calls":1}}}`)}, countingLog{}, "b.json: budgets: agents.bot.calls: unknown member"},
		{Files{Budgets: write(t, "big.json", strings.Repeat(" ", budget.MaxFileBytes+1))}, countingLog{}, "bytes; the limit is 1048576"},
	} {
		_, err := Build(tc.f, tc.log, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
}
