package console_test

import (
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/warrant"
)

const freshView = `{"proposition_id": "P-fresh", "view_id": "f1", "freshness_policy_seconds": 3600,
 "assertions": [{"assertion_id": "a1", "text": "the backup ran", "asserted_by": "assistant", "assertion_confidence": 0.9,
   "asserted_at": "2026-12-01T11:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn",
   "origin_locator": "chat", "snapshot_id": "c@1", "content_hash": "sha256:1", "observed_at": "2026-12-01T11:00:00Z"}}],
 "checks": [{"check_id": "k1", "method": "human_review", "scope": "backup", "result": "supports",
   "observed_at": "2026-12-01T11:30:00Z", "source": {"source_id": "s2", "lineage_id": "L2", "origin_type": "human",
   "origin_locator": "review", "snapshot_id": "r@1", "content_hash": "sha256:2", "observed_at": "2026-12-01T11:30:00Z"}}]}`

var staleCountRE = regexp.MustCompile(`<span class="n">(\d+)</span> <span class="badge b-stale">STALE`)

func staleCount(t *testing.T, page string) int {
	t.Helper()
	m := staleCountRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no STALE count on the overview")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The summary follows a new snapshot as soon as the head moves, and
// counts a proposition STALE once the clock passes its crossing, without
// a new snapshot.
func TestSummaryFollowsHeadAndClock(t *testing.T) { eachStore(t, testSummaryFollowsHeadAndClock) }

func testSummaryFollowsHeadAndClock(t *testing.T, st backend) {
	var now atomic.Int64
	now.Store(clockAt.UnixNano())
	e := newEnvOn(t, st, func(c *console.Config) { c.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() } })
	c := e.client()
	c.mustSignIn()
	_, page := c.get("/console/")
	before := staleCount(t, page)

	v, err := warrant.DecodeView([]byte(freshView))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.l.Put(t.Context(), []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new proposition listed", func() bool {
		_, p := c.get("/console/propositions?q=P-fresh")
		return regexp.MustCompile(`P-fresh</a></td>\s*<td><code>f1`).MatchString(p)
	})
	_, page = c.get("/console/")
	if got := staleCount(t, page); got != before {
		t.Fatalf("STALE count %d after adding a current proposition, want %d", got, before)
	}
	now.Store(time.Date(2026, 12, 1, 12, 30, 1, 0, time.UTC).UnixNano()) // past 11:30 + 3600 s
	waitFor(t, "the STALE count to include P-fresh", func() bool {
		_, p := c.get("/console/")
		return staleCount(t, p) == before+1
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
