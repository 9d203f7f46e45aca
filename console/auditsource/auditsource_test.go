package auditsource_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/auditsource"
	"github.com/ewp-go/ewp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// Newest-first paging, the calls presenting an approval, and the chain
// summary, on a real log of each store.
func TestAdapters(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		l, err := sqlite.Create(filepath.Join(t.TempDir(), "x.audit"), sqlite.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		checkAdapters(t, l)
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.DB(t)
		if err := postgres.Init(t.Context(), url, ""); err != nil {
			t.Fatal(err)
		}
		l, err := postgres.Open(t.Context(), url, postgres.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		checkAdapters(t, l)
	})
}

// For gives the extras to either store and none to a log that is
// neither (the in-memory log of --demo).
func TestForOnlyStores(t *testing.T) {
	if x := auditsource.For(memlog.New(nil)); x.LogVerify != nil || x.ListNewest != nil || x.Presented != nil {
		t.Fatal("the in-memory log got store extras")
	}
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "x.audit"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var cfg console.Config
	auditsource.For(l).Apply(&cfg)
	if cfg.LogVerify == nil || cfg.ListNewest == nil || cfg.Presented == nil {
		t.Fatal("the SQLite log got no extras")
	}
}

func checkAdapters(t *testing.T, l auditstore.Log) {
	ctx := t.Context()
	rec := func(i int, outcome audit.Outcome, approval string) *audit.Decision {
		d := &audit.Decision{ID: fmt.Sprintf("0192f000-0000-7000-8000-%012d", i), Time: now.Add(time.Duration(i) * time.Second),
			Tool: audit.ToolMayAct, Caller: audit.Caller{Transport: "stdio", Role: "evaluate"}, PropositionID: "P",
			ActionKind: "delete", Outcome: outcome, ApprovalID: approval}
		if err := l.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i := 1; i <= 5; i++ {
		rec(i, audit.OutcomeMayAct, "")
	}
	pending := rec(6, audit.OutcomeRequireConfirmation, "")
	a := &audit.Approval{DecisionID: pending.ID, Verdict: audit.Approved, Approver: "Ada", Once: true}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatal(err)
	}
	used := rec(7, audit.OutcomeMayAct, a.ID)

	newest := auditsource.ListNewest(l)
	page, err := newest(ctx, audit.Filter{Limit: 3})
	if err != nil || len(page) != 3 || page[0].ID != used.ID {
		t.Fatalf("newest page: %v %v", ids(page), err)
	}
	older, _ := newest(ctx, audit.Filter{Limit: 3, After: page[2].ID})
	if len(older) != 3 || older[0].ID != "0192f000-0000-7000-8000-000000000004" {
		t.Fatalf("older page: %v", ids(older))
	}
	got, err := auditsource.Presented(l)(ctx, a.ID, 10)
	if err != nil || len(got) != 1 || got[0].ID != used.ID {
		t.Fatalf("presented: %v %v", ids(got), err)
	}
	sum, err := auditsource.Verify(l)(ctx)
	if err != nil || !strings.Contains(sum, "7 decisions, 1 approval,") {
		t.Fatalf("verify: %q %v", sum, err)
	}
}

func ids(ds []audit.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
