package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/auditsource"
	"github.com/ewp-go/ewp/console/ledgersource"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	ledgersqlite "github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// perfSize is the number of propositions and of decisions of the page
// timing test: 2,000 by default, EWP_CONSOLE_PERF_N=100000 for the size
// the issue names (building that ledger takes a few minutes; it is kept in
// EWP_CONSOLE_PERF_DIR when set, and reused).
func perfSize(t *testing.T) int {
	n := 2000
	if s := os.Getenv("EWP_CONSOLE_PERF_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 10 {
			t.Fatalf("EWP_CONSOLE_PERF_N=%q: want a number of propositions ≥ 10", s)
		}
	}
	return n
}

// perfLedger builds (or reopens) a ledger of n synthetic propositions.
func perfLedger(t *testing.T, n int) *ledgersqlite.Ledger {
	dir := os.Getenv("EWP_CONSOLE_PERF_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("console-perf-%d.db", n))
	if l, err := ledgersqlite.Open(path, ledgersqlite.Options{}); err == nil {
		return l
	}
	l, err := ledgersqlite.Create(path, ledgersqlite.Options{Now: func() time.Time { return clockAt.Add(-48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 10_000
	for first := 0; first < n; first += batch {
		views := make([]*warrant.View, 0, batch)
		for i := first; i < min(first+batch, n); i++ {
			v, err := warrant.DecodeView(snapshottest.SyntheticView(i, i%4))
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, v)
		}
		if _, err := l.Put(context.Background(), views); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := graphstore.LoadDocument(context.Background(), l, fixtures.DemoGraph); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPageTimings measures every page on a ledger of n propositions with
// n decisions in the log, and holds each to the 100 ms.
func TestPageTimings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a ledger")
	}
	n := perfSize(t)
	start := time.Now()
	l := perfLedger(t, n)
	defer l.Close()
	t.Logf("ledger of %d propositions ready in %v", n, time.Since(start).Round(time.Millisecond))
	src, err := ledgersource.New(l)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start = time.Now()
	log, pendingID := perfLog(t, n)
	defer log.Close()
	t.Logf("decision log of %d decisions ready in %v", n, time.Since(start).Round(time.Millisecond))
	e := &env{t: t, l: l, log: log}
	e.srv = newUnstarted()
	e.con, err = console.New(console.Config{Evidence: src, Log: log, LogVerify: auditsource.Verify(log),
		ListNewest: auditsource.ListNewest(log), Presented: auditsource.Presented(log), Graph: graphstore.New(l, nil).Graph,
		OperatorToken: testToken, Addr: e.srv.Listener.Addr().String(), Now: func() time.Time { return clockAt }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.con.Close()
	e.srv.Config.Handler = e.con
	e.srv.Start()
	defer e.srv.Close()
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := e.con.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("state summary of %d propositions computed in the background in %v", n, time.Since(start).Round(time.Millisecond))
	c := e.client()
	c.mustSignIn()
	waitFor(t, "the decision tail to catch up", func() bool {
		_, p := c.get("/console/")
		return strings.Contains(p, fmt.Sprintf("%d decisions in the log", n))
	})
	mid := fmt.Sprintf("P-%07d", n/2)
	pages := []string{
		"/console/", "/console/propositions", fmt.Sprintf("/console/propositions?page=%d", n/pageSizeForTest/2),
		"/console/propositions?state=open", "/console/propositions?q=" + mid, "/console/propositions?q=service+build+42+", "/console/propositions?q=load+balancer",
		"/console/proposition?id=" + mid,
		"/console/decisions", "/console/decisions?after=0192f000-0000-7000-8000-000000050000", "/console/decisions?from=start",
		"/console/decisions?outcome=DENY&after=0192f000-0000-7000-8000-000000000500",
		"/console/decisions?outcome=REQUIRE_CONFIRMATION", "/console/decisions?pending=on", "/console/decisions?prop=" + mid,
		"/console/decisions?since=2026-12-01T10:00&until=2026-12-01T11:00",
		"/console/decision?id=" + pendingID, "/console/inbox", "/console/graph", "/console/graph?q=delete,file",
	}
	for _, p := range pages {
		var times []time.Duration
		for range 7 {
			t0 := time.Now()
			code, body := c.get(p)
			times = append(times, time.Since(t0))
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", p, code, body)
			}
		}
		slices.Sort(times)
		median, worst := times[len(times)/2], times[len(times)-1]
		t.Logf("%-75s median %6.2f ms  max %6.2f ms", p, ms(median), ms(worst))
		if median > 100*time.Millisecond {
			t.Errorf("GET %s: median %v on %d propositions and %d decisions, over 100 ms", p, median, n, n)
		}
	}
}

const pageSizeForTest = 50

// perfDecision is decision i of the timing test's log: one in a thousand
// waits for confirmation.
func perfDecision(i, n int) *audit.Decision {
	outcome := []audit.Outcome{audit.OutcomeMayAct, audit.OutcomeDeny, audit.OutcomeRefused, audit.OutcomeAnswered}[i%4]
	if i%1000 == 999 {
		outcome = audit.OutcomeRequireConfirmation
	}
	return &audit.Decision{ID: fmt.Sprintf("0192f000-0000-7000-8000-%012d", i), Time: clockAt.Add(time.Duration(i-n) * time.Second),
		Tool: audit.ToolMayAct, Caller: audit.Caller{Transport: "http", Role: "evaluate"}, PropositionID: fmt.Sprintf("P-%07d", i%n),
		Outcome: outcome, ActionKind: "delete", Layers: []audit.Layer{{Layer: "warrant", Decision: layerVerdict(outcome), Reasons: []string{"r"}}}}
}

// layerVerdict is a layer's verdict that fits outcome (a refusal's and a
// check_grounding answer's are not outcomes of the action gate).
func layerVerdict(o audit.Outcome) audit.Verdict {
	switch o {
	case audit.OutcomeRefused:
		return audit.VerdictDeny
	case audit.OutcomeAnswered:
		return audit.VerdictGrounded
	}
	return audit.Verdict(o)
}

// perfLog builds (or reopens) the SQLite decision log of n decisions,
// recording them from many goroutines so the store's group commits batch
// them, and returns it with the id of its last pending decision.
func perfLog(t *testing.T, n int) (*sqlite.Log, string) {
	pending := ""
	for i := range n {
		if i%1000 == 999 {
			pending = perfDecision(i, n).ID
		}
	}
	if pending == "" {
		t.Fatal("the timing test needs at least 1,000 decisions")
	}
	dir := os.Getenv("EWP_CONSOLE_PERF_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("console-perf-%d.db.audit", n))
	opt := sqlite.Options{Now: func() time.Time { return clockAt }}
	if l, err := sqlite.Open(path, opt); err == nil {
		return l, pending
	}
	l, err := sqlite.Create(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 64 {
		wg.Go(func() {
			for i := w; i < n; i += 64 {
				if err := l.Record(context.Background(), perfDecision(i, n)); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	return l, pending
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
