package audittest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

func recordFillsIDAndTimeAndReadsBack(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := pendingDecision("P-db", 1)
	d.RiskPolicy = map[string]any{"high": "REQUIRE_CONFIRMATION"}
	record(t, l, d)
	if d.ID == "" || !d.Time.Equal(t0) {
		t.Fatalf("Record left id %q time %v", d.ID, d.Time)
	}
	got, err := l.Decision(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(d)
	have, _ := json.Marshal(got)
	if string(want) != string(have) {
		t.Fatalf("read back\n%s\nwant\n%s", have, want)
	}
	if _, err := l.Decision(ctx, "nope"); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	h, err := l.Head(ctx)
	if err != nil || h.Seq != 1 || len(h.Hash) != 64 {
		t.Fatalf("head %v %v", h, err)
	}
}

func recordRefusesWhatNoCallProduces(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	for _, d := range []*audit.Decision{
		{Outcome: audit.OutcomeDeny},
		{Tool: audit.ToolMayAct, Outcome: "MAYBE"},
	} {
		if err := l.Record(ctx, d); err == nil {
			t.Errorf("recorded %+v", d)
		}
	}
	d := record(t, l, pendingDecision("P", 0))
	again := *d
	if err := l.Record(ctx, &again); err == nil || !strings.Contains(err.Error(), "already recorded") {
		t.Fatalf("same decision_id twice: %v", err)
	}
}

func listFiltersAndPages(t *testing.T, s Store) {
	l, c := s.newLog(t)
	var all []string
	for i := range 10 {
		c.set(t0.Add(time.Duration(i) * time.Minute))
		d := pendingDecision("P-a", i)
		if i%2 == 1 {
			d.PropositionID = "P-b"
		}
		if i%3 == 0 {
			d.Outcome = audit.OutcomeMayAct
		}
		all = append(all, record(t, l, d).ID)
	}
	ids := func(f audit.Filter) []string {
		t.Helper()
		ds, err := l.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	pick := func(is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, all[i])
		}
		return out
	}
	cases := []struct {
		name string
		f    audit.Filter
		want []string
	}{
		{"all", audit.Filter{}, all},
		{"since inclusive, until exclusive", audit.Filter{Since: t0.Add(2 * time.Minute), Until: t0.Add(5 * time.Minute)}, pick(2, 3, 4)},
		{"outcome", audit.Filter{Outcome: audit.OutcomeMayAct}, pick(0, 3, 6, 9)},
		{"proposition", audit.Filter{PropositionID: "P-b"}, pick(1, 3, 5, 7, 9)},
		{"pending", audit.Filter{Pending: true}, pick(1, 2, 4, 5, 7, 8)},
		{"first page", audit.Filter{Limit: 4}, pick(0, 1, 2, 3)},
		{"next page", audit.Filter{Limit: 4, After: all[3]}, pick(4, 5, 6, 7)},
		{"last page", audit.Filter{Limit: 4, After: all[7]}, pick(8, 9)},
		{"filtered page", audit.Filter{Limit: 2, After: all[1], PropositionID: "P-b"}, pick(3, 5)},
	}
	for _, tc := range cases {
		if got := ids(tc.f); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Answering a decision takes it off the pending list, a rejection too.
	approveOnce(t, l, all[2])
	if err := l.Approve(ctx, &audit.Approval{DecisionID: all[4], Verdict: audit.Rejected, Approver: "ops", Note: "no"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(audit.Filter{Pending: true}); strings.Join(got, " ") != strings.Join(pick(1, 5, 7, 8), " ") {
		t.Errorf("pending after answers: %v", got)
	}
	var newest []string
	err := l.Each(ctx, auditchain.Query{Filter: audit.Filter{Limit: 3, After: all[8]}, NewestFirst: true}, func(d *audit.Decision) error {
		newest = append(newest, d.ID)
		return nil
	})
	if err != nil || strings.Join(newest, " ") != strings.Join(pick(7, 6, 5), " ") {
		t.Errorf("newest first after #8: %v %v", newest, err)
	}
	if _, err := l.List(ctx, audit.Filter{After: "nope"}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("after an unknown id: %v", err)
	}
}

func listDefaultLimit(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	for i := range auditchain.DefaultLimit + 5 {
		record(t, l, pendingDecision("P", i))
	}
	ds, err := l.List(ctx, audit.Filter{})
	if err != nil || len(ds) != auditchain.DefaultLimit {
		t.Fatalf("got %d decisions, %v; want a page of %d", len(ds), err, auditchain.DefaultLimit)
	}
}

func approveChecksTheDecision(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := record(t, l, pendingDecision("P-db", 1))
	ok := pendingDecision("P-db", 2)
	ok.Outcome = audit.OutcomeMayAct
	record(t, l, ok)

	if err := l.Approve(ctx, &audit.Approval{DecisionID: "nope", Verdict: audit.Approved, Approver: "ops", Once: true}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("unknown decision: %v", err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: ok.ID, Verdict: audit.Approved, Approver: "ops", Once: true}); !errors.Is(err, audit.ErrNotPending) {
		t.Errorf("MAY_ACT decision: %v", err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}); !errors.Is(err, audit.ErrInvalidApproval) {
		t.Errorf("no approver: %v", err)
	}
	a := approveOnce(t, l, d.ID)
	if a.ID == "" || a.Action == nil || a.Action.ActionID != d.ActionID || !a.CreatedAt.Equal(t0) {
		t.Fatalf("approval not filled in: %+v", a)
	}
	err := l.Approve(ctx, &audit.Approval{DecisionID: d.ID, Verdict: audit.Rejected, Approver: "other", Note: "no"})
	if !errors.Is(err, audit.ErrAnswered) || !strings.Contains(err.Error(), a.ID) {
		t.Errorf("second answer: %v", err)
	}
	got, err := l.Approval(ctx, a.ID)
	if err != nil || got.Approver != "ops" || got.Action.ArgumentsHash != "ab12" {
		t.Fatalf("Approval: %+v %v", got, err)
	}
	list, err := l.ApprovalsFor(ctx, d.ID)
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("ApprovalsFor: %+v %v", list, err)
	}
	if _, err := l.Approval(ctx, "nope"); !errors.Is(err, audit.ErrNotFound) || audit.CodeOf(err) != audit.CodeApprovalNotFound {
		t.Errorf("unknown approval: %v", err)
	}
	mustVerify(t, l)
}

// UsingDecision is the MAY_ACT decision of a call that presented approval
// approvalID and was lifted by it, as the gate records it with RecordUse.
func UsingDecision(approvalID string, i int) *audit.Decision {
	d := PendingDecision("P-db", i)
	d.Outcome, d.ApprovalID = audit.OutcomeMayAct, approvalID
	d.Layers = append(d.Layers, audit.Layer{Layer: "approval", Decision: audit.VerdictMayAct, Reasons: []string{"APPROVED"}})
	return d
}

// refusedUse checks that RecordUse refused d with want and recorded
// nothing of it.
func refusedUse(t *testing.T, l Log, d *audit.Decision, want error, what string) {
	t.Helper()
	if err := l.RecordUse(ctx, d); !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
	if d.ID == "" {
		return
	}
	if _, err := l.Decision(ctx, d.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("%s: the refused decision was recorded (%v)", what, err)
	}
}

func consume(t *testing.T, s Store) {
	l, c := s.newLog(t)
	d := record(t, l, pendingDecision("P-db", 1))
	a := approveOnce(t, l, d.ID)
	if _, err := l.UseOf(ctx, a.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("unused approval has a use: %v", err)
	}
	// Only a MAY_ACT decision uses an approval.
	notAllowed := UsingDecision(a.ID, 10)
	notAllowed.Outcome = audit.OutcomeRequireConfirmation
	refusedUse(t, l, notAllowed, audit.ErrNotMayAct, "a REQUIRE_CONFIRMATION decision")
	// A decision refused for its idempotency key uses nothing.
	keyed := pendingDecision("P-db", 11)
	keyed.IdempotencyKey = "k"
	record(t, l, keyed)
	dup := UsingDecision(a.ID, 12)
	dup.IdempotencyKey = "k"
	refusedUse(t, l, dup, audit.ErrDuplicateKey, "a duplicate idempotency key")
	if _, err := l.UseOf(ctx, a.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("a refused decision used the approval: %v", err)
	}

	user := UsingDecision(a.ID, 1)
	if err := l.RecordUse(ctx, user); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Decision(ctx, user.ID); err != nil || got.ApprovalID != a.ID {
		t.Fatalf("the decision that used the approval: %+v %v", got, err)
	}
	again := UsingDecision(a.ID, 2)
	err := l.RecordUse(ctx, again)
	if !errors.Is(err, audit.ErrApprovalUsed) || audit.CodeOf(err) != audit.CodeApprovalUsed || !strings.Contains(err.Error(), user.ID) {
		t.Fatalf("second use: %v", err)
	}
	refusedUse(t, l, again, audit.ErrApprovalUsed, "second use")
	u, err := l.UseOf(ctx, a.ID)
	if err != nil || u.UsedBy != user.ID {
		t.Fatalf("UseOf: %+v %v", u, err)
	}

	rej := record(t, l, pendingDecision("P-db", 2))
	r := &audit.Approval{DecisionID: rej.ID, Verdict: audit.Rejected, Approver: "ops", Note: "use the replica"}
	if err := l.Approve(ctx, r); err != nil {
		t.Fatal(err)
	}
	refusedUse(t, l, UsingDecision(r.ID, 3), audit.ErrApprovalRejected, "a rejection")

	sd := record(t, l, pendingDecision("P-db", 3))
	sa := &audit.Approval{DecisionID: sd.ID, Verdict: audit.Approved, Approver: "ops",
		Scope: &audit.Scope{PropositionID: "P-db", ActionKind: "migrate"}, Until: t0.Add(time.Hour)}
	if err := l.Approve(ctx, sa); err != nil {
		t.Fatal(err)
	}
	refusedUse(t, l, UsingDecision(sa.ID, 4), audit.ErrInvalidApproval, "a scope approval")

	ed := record(t, l, pendingDecision("P-db", 4))
	e := &audit.Approval{DecisionID: ed.ID, Verdict: audit.Approved, Approver: "ops", Once: true, Until: t0.Add(time.Minute)}
	if err := l.Approve(ctx, e); err != nil {
		t.Fatal(err)
	}
	c.set(t0.Add(time.Minute))
	refusedUse(t, l, UsingDecision(e.ID, 5), audit.ErrApprovalExpired, "an expired approval")
	refusedUse(t, l, UsingDecision("nope", 6), audit.ErrNotFound, "an unknown approval")
	rep := mustVerify(t, l)
	if rep.Decisions != 6 || rep.Approvals != 4 || rep.Uses != 1 {
		t.Errorf("report %+v", rep)
	}
}

// consumeRace: 64 goroutines, spread over four handles on one store (as
// four server processes or replicas would be), present one single-use
// approval at once: exactly one decision is recorded with its use, and
// no other is recorded at all.
func consumeRace(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	handles := []Log{l, s.again(t, l, false), s.again(t, l, false), s.again(t, l, false)}
	a := approveOnce(t, l, record(t, l, pendingDecision("P-db", 1)).ID)
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			lg := handles[i%len(handles)]
			errs[i] = lg.RecordUse(ctx, UsingDecision(a.ID, i))
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, audit.ErrApprovalUsed):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d consumers won, want exactly 1", wins)
	}
	rep := mustVerify(t, l)
	if rep.Decisions != 2 || rep.Uses != 1 {
		t.Fatalf("report %+v: want the pending decision, the one that used the approval, and its use", rep)
	}
}

// useFailsWithItsDecision: when the write of an approval's use fails
// (Store.FailUses: a full disk, an I/O error), the decision that was to
// use it is not recorded either: RecordUse fails, the approval is still
// unused and usable, and the log verifies.
func useFailsWithItsDecision(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	a := approveOnce(t, l, record(t, l, pendingDecision("P-db", 1)).ID)
	restore := s.FailUses(t, l)
	d := UsingDecision(a.ID, 2)
	err := l.RecordUse(ctx, d)
	restore()
	if err == nil || auditchain.IsRefusal(err) {
		t.Fatalf("RecordUse with the use's write failing: %v, want a storage failure", err)
	}
	if _, err := l.Decision(ctx, d.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("the decision is on record without its use: %v", err)
	}
	if _, err := l.UseOf(ctx, a.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("the approval is used: %v", err)
	}
	rep := mustVerify(t, l)
	if rep.Decisions != 1 || rep.Uses != 0 {
		t.Fatalf("report %+v", rep)
	}
	if err := l.RecordUse(ctx, UsingDecision(a.ID, 3)); err != nil {
		t.Fatalf("the approval is no longer usable: %v", err)
	}
	mustVerify(t, l)
}

func idempotencyKey(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	keyed := func(cred, key string) *audit.Decision {
		d := pendingDecision("P", 0)
		d.Caller.Credential, d.IdempotencyKey = cred, key
		return d
	}
	first := record(t, l, keyed("agent-1", "k1"))
	if err := l.Record(ctx, keyed("agent-1", "k1")); !errors.Is(err, audit.ErrDuplicateKey) {
		t.Fatalf("same credential and key: %v", err)
	}
	record(t, l, keyed("agent-2", "k1")) // another credential's key space
	record(t, l, keyed("agent-1", ""))   // no key: never a duplicate
	record(t, l, keyed("agent-1", ""))
	got, err := l.ByIdempotencyKey(ctx, "agent-1", "k1")
	if err != nil || got.ID != first.ID {
		t.Fatalf("ByIdempotencyKey: %v %v", got, err)
	}
	if _, err := l.ByIdempotencyKey(ctx, "agent-3", "k1"); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	// Concurrent retries with one key, in one batch and through three
	// handles (processes, replicas): exactly one recorded.
	handles := []Log{l, s.again(t, l, false), s.again(t, l, false)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 32 {
		wg.Go(func() {
			err := handles[i%len(handles)].Record(ctx, keyed("agent-9", "race"))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if !errors.Is(err, audit.ErrDuplicateKey) {
				t.Errorf("race: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d racing retries recorded, want 1", wins)
	}
	mustVerify(t, l)
}

// concurrentRecordsChain: 64 writers through group commit, spread over
// three handles on one store (processes, replicas: many writers, one
// chain), leave every decision on record and an unbroken chain.
func concurrentRecordsChain(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	handles := []Log{l, s.again(t, l, false), s.again(t, l, false)}
	const writers, each = 64, 20
	ids := make(chan string, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				d := pendingDecision("P", w*each+i)
				if err := handles[w%len(handles)].Record(ctx, d); err != nil {
					t.Errorf("writer %d: record: %v", w, err)
					return
				}
				ids <- d.ID
			}
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		if _, err := l.Decision(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, l)
	if rep.Decisions != writers*each || rep.Head.Seq != writers*each {
		t.Fatalf("report %+v", rep)
	}
}

// closeCommitsQueuedWrites: Close, called once the log has taken 50
// concurrent Records into its batches (CommitStats says so) and while
// they may still be committing, returns only when they are committed:
// every one of them answers nil and is on record in the log opened again.
// (That writes still waiting in the queue when Close is called commit too
// is auditchain's TestGroupCommitStopCommitsQueuedWrites.)
func closeCommitsQueuedWrites(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	const n = 50
	ids := make([]string, n)
	errs := make(chan error, n)
	for i := range n {
		d := pendingDecision("P", i)
		d.ID = audit.NewID()
		ids[i] = d.ID
		go func() { errs <- l.Record(ctx, d) }()
	}
	waitUntil(t, "the log has taken every write", func() bool {
		_, writes := l.CommitStats()
		return writes >= n
	})
	l.Close()
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("a Record taken before Close: %v", err)
		}
	}
	ro := s.again(t, l, true)
	for _, id := range ids {
		if _, err := ro.Decision(ctx, id); err != nil {
			t.Fatalf("a Record taken before Close is not in the log: %v", err)
		}
	}
	if rep := mustVerify(t, ro); rep.Decisions != n {
		t.Fatalf("%d decisions on record, want %d", rep.Decisions, n)
	}
}

// groupCommitSharesCommits: 64 concurrent Records take far fewer than
// 64 transactions.
func groupCommitSharesCommits(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			<-start
			if err := l.Record(ctx, pendingDecision("P", i)); err != nil {
				t.Errorf("record: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	commits, writes := l.CommitStats()
	if writes != 64 || commits > 16 {
		t.Fatalf("%d records took %d commits; want them batched (at most 16)", writes, commits)
	}
	t.Logf("64 concurrent records: %d commits", commits)
}

// listByTimeWindow: a time window selects the decisions whose time is in
// it (Since inclusive, Until exclusive), in recording order whatever
// their times, and pages continue correctly in both directions.
func listByTimeWindow(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	mins := []int{3, 1, 2, 5, 4, 0}
	byMin := map[int]string{}
	for i, m := range mins {
		d := pendingDecision("P", i)
		d.Time = t0.Add(time.Duration(m) * time.Minute)
		byMin[m] = record(t, l, d).ID
	}
	page := func(q auditchain.Query) []string {
		t.Helper()
		var ids []string
		if err := l.Each(ctx, q, func(d *audit.Decision) error { ids = append(ids, d.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	window := audit.Filter{Since: t0.Add(time.Minute), Until: t0.Add(5 * time.Minute), Limit: 2}
	got := page(auditchain.Query{Filter: window})
	// Recorded at minutes 3, 1, 2, 5, 4, 0: the window [1, 5) holds 3, 1, 2, 4.
	if strings.Join(got, " ") != byMin[3]+" "+byMin[1] {
		t.Fatalf("first page %v", got)
	}
	window.After = got[1]
	got = page(auditchain.Query{Filter: window})
	if strings.Join(got, " ") != byMin[2]+" "+byMin[4] {
		t.Fatalf("second page %v", got)
	}
	window.After = ""
	got = page(auditchain.Query{Filter: window, NewestFirst: true})
	if strings.Join(got, " ") != byMin[4]+" "+byMin[2] {
		t.Fatalf("newest first %v", got)
	}
}

// followingNeverSkipsALateRecord: a reader following the log (List with
// After set to the last decision it saw, as the console's tail and a SIEM
// do) gets every decision recorded after, even one whose decision_id is
// older: the server mints the id as a call begins, so a slow call is
// recorded after a quick one that began later.
func followingNeverSkipsALateRecord(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	slow, quick := pendingDecision("P", 1), pendingDecision("P", 2)
	slow.ID, quick.ID = audit.NewID(), audit.NewID() // slow began first
	record(t, l, quick)
	seen, err := l.List(ctx, audit.Filter{})
	if err != nil || len(seen) != 1 {
		t.Fatalf("first read: %v %v", seen, err)
	}
	record(t, l, slow)
	next, err := l.List(ctx, audit.Filter{After: seen[0].ID})
	if err != nil || len(next) != 1 || next[0].ID != slow.ID {
		t.Fatalf("following after %s: got %v (%v), want the late %s", seen[0].ID, next, err, slow.ID)
	}
}

// invalidUTF8Ids: the kernel carries lone surrogates as WTF-8, which
// JSON cannot hold; such a decision is recorded, found by its ids and
// verifies (its columns are what the JSON body reads back as).
func invalidUTF8Ids(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := pendingDecision("P-\xed\xa0\x80-x", 1)
	d.Caller.Credential, d.IdempotencyKey = "agent-\xff", "k-\xed\xa0\x80"
	record(t, l, d)
	if got, err := l.ByIdempotencyKey(ctx, "agent-\xff", "k-\xed\xa0\x80"); err != nil || got.ID != d.ID {
		t.Fatalf("ByIdempotencyKey: %v %v", got, err)
	}
	if ds, err := l.List(ctx, audit.Filter{PropositionID: "P-\xed\xa0\x80-x"}); err != nil || len(ds) != 1 {
		t.Fatalf("List by proposition: %v %v", ds, err)
	}
	approveOnce(t, l, d.ID)
	mustVerify(t, l)
}

// signedApprovalReadsBackSigned: an approval an operator signed, with
// ids and a note that JSON does not keep byte for byte (invalid UTF-8, an
// HTML-sensitive character), is stored as signed (the store checks the
// signed action, fills nothing over it) and read back from another handle
// still verifying, in the key's name; one signed for another action is
// refused.
func signedApprovalReadsBackSigned(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := record(t, l, pendingDecision("P-\xed\xa0\x80-signed", 1))
	alice := NewOperator("alice")
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true, Note: "OPS-12 <ok> & \xff"}
	if err := alice.Approve(ctx, l, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.again(t, l, true).Approval(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if name, err := alice.Keys.Verify(got); err != nil || name != "alice" {
		t.Fatalf("a signed approval read back: %q %v", name, err)
	}
	other := record(t, l, pendingDecision("P", 2))
	b := &audit.Approval{DecisionID: other.ID, Verdict: audit.Approved, Once: true}
	alice.Sign(b, d, t0) // signed for d's action, stored as an answer to other
	b.DecisionID = other.ID
	if err := l.Approve(ctx, b); !errors.Is(err, audit.ErrInvalidApproval) {
		t.Fatalf("an approval signed for another action: %v", err)
	}
}

// batchRefusesOnlyTheDuplicate: Records racing with one reused
// decision_id, among Records with fresh ids, approvals and uses: one of
// the reused-id Records is stored, the others are refused, and every
// other write of their batches commits; the chain verifies.
func batchRefusesOnlyTheDuplicate(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	var answered []*audit.Decision
	for i := range 8 {
		answered = append(answered, record(t, l, pendingDecision("P", 100+i)))
	}
	reused := audit.NewID()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored, refused := 0, 0
	var fresh []string
	for i := range 48 {
		wg.Go(func() {
			<-start
			switch {
			case i%6 == 0:
				d := pendingDecision("P", i)
				d.ID = reused
				err := l.Record(ctx, d)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					stored++
				} else if strings.Contains(err.Error(), "already recorded") {
					refused++
				} else {
					t.Errorf("reused id: %v", err)
				}
			case i%6 == 1:
				a := &audit.Approval{DecisionID: answered[i/6].ID, Verdict: audit.Approved, Approver: "ops", Once: true}
				if err := l.Approve(ctx, a); err != nil {
					t.Errorf("approve: %v", err)
					return
				}
				d := UsingDecision(a.ID, i)
				if err := l.RecordUse(ctx, d); err != nil {
					t.Errorf("record use: %v", err)
				}
				mu.Lock()
				fresh = append(fresh, d.ID)
				mu.Unlock()
			default:
				d := pendingDecision("P", i)
				if err := l.Record(ctx, d); err != nil {
					t.Errorf("record: %v", err)
					return
				}
				mu.Lock()
				fresh = append(fresh, d.ID)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if stored != 1 || refused != 7 {
		t.Fatalf("reused id: %d stored, %d refused; want 1 and 7", stored, refused)
	}
	for _, id := range fresh {
		if _, err := l.Decision(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, l)
	if rep.Decisions != int64(8+1+len(fresh)) || rep.Approvals != 8 || rep.Uses != 8 {
		t.Fatalf("report %+v", rep)
	}
}
