package console

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
)

// The tail keeps each proposition's newest decisions, newest first and
// bounded, slimmed to what the proposition page lists; a proposition it
// does not track (past propsTracked) is left to the log.
func TestTailIndexesDecisionsByProposition(t *testing.T) {
	tl := newDecisionTail(nil)
	close(tl.ready)
	var batch []audit.Decision
	for i := range propDecisions + 5 {
		batch = append(batch, audit.Decision{ID: fmt.Sprintf("d%03d", i), PropositionID: "P-a", Outcome: audit.OutcomeMayAct,
			Arguments: []byte(`{"big":"arguments"}`)})
	}
	batch = append(batch, audit.Decision{ID: "other", PropositionID: "P-b"}, audit.Decision{ID: "none"})
	tl.add(batch)
	rows, ok := tl.decisionsOn("P-a")
	if !ok || len(rows) != propDecisions+1 || rows[0].ID != fmt.Sprintf("d%03d", propDecisions+4) || rows[propDecisions].ID != "d004" {
		t.Fatalf("P-a: ok=%v, %d rows, first %+v", ok, len(rows), rows[:1])
	}
	if rows[0].Arguments != nil {
		t.Error("the index keeps whole decisions")
	}
	if rows, ok := tl.decisionsOn("P-none"); !ok || len(rows) != 0 {
		t.Errorf("an untracked proposition while below the bound: %v %v", rows, ok)
	}
	for i := len(tl.byProp); i < propsTracked; i++ {
		tl.byProp[fmt.Sprintf("P-%d", i)] = nil
	}
	if _, ok := tl.decisionsOn("P-new"); ok {
		t.Error("past propsTracked, a proposition the tail never saw must be asked of the log")
	}
	if _, ok := tl.decisionsOn("P-a"); !ok {
		t.Error("a tracked proposition stays answered")
	}
}

// A log that pages forward only is read to its end for a proposition the
// tail cannot answer, keeping the newest.
func TestLastDecisionsOfAForwardOnlyLog(t *testing.T) {
	l := memlog.New(time.Now)
	ctx := context.Background()
	for i := range pageSize + 30 {
		prop := "P-a"
		if i%2 == 1 {
			prop = "P-b"
		}
		d := &audit.Decision{ID: fmt.Sprintf("0192f000-0000-7000-8000-%012d", i), Time: time.Unix(int64(i), 0),
			Tool: audit.ToolMayAct, PropositionID: prop, Outcome: audit.OutcomeMayAct, ArgumentsHash: strings.Repeat("0f", 32)}
		if err := l.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	got, err := lastDecisions(r, l, audit.Filter{PropositionID: "P-a", Limit: propDecisions + 1})
	if err != nil {
		t.Fatal(err)
	}
	last := pageSize + 28 // the newest even index
	if len(got) != propDecisions+1 || got[len(got)-1].ID != fmt.Sprintf("0192f000-0000-7000-8000-%012d", last) {
		t.Fatalf("%d decisions, last %+v", len(got), got[len(got)-1].ID)
	}
}
