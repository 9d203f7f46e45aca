package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/warrant"
)

// buildIngest builds the ewp-ingest command into a temporary directory.
func buildIngest(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ewp-ingest")
	if out, err := exec.Command("go", "build", "-o", bin, "../ewp-ingest").CombinedOutput(); err != nil {
		t.Fatalf("building ewp-ingest: %v\n%s", err, out)
	}
	return bin
}

// scaleView is one view an ingest writes: its polarity alternates with
// the batch, so the warrant of a proposition changes as batches land.
func scaleView(pid, vid string, batch int) string {
	pol := "supports"
	if batch%3 == 2 {
		pol = "opposes"
	}
	v := map[string]any{"proposition_id": pid, "view_id": vid,
		"evidence": []any{map[string]any{"evidence_id": "e-" + vid, "polarity": pol, "content": "c " + vid,
			"observed_at": "2026-09-01T00:00:00Z", "source": src("s-" + vid)}}}
	b, _ := json.Marshal(v)
	return string(b)
}

func src(id string) map[string]any {
	return map[string]any{"source_id": id, "lineage_id": "L-" + id, "origin_type": "extract", "origin_locator": "x",
		"snapshot_id": id, "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}
}

type viewKey struct{ pid, vid string }

// report passes err on without ever blocking (the channel is drained
// only at the end).
func report(errs chan<- error, err error) {
	select {
	case errs <- err:
	default:
	}
}

// ingestLoop runs ewp-ingest processes, one batch of views each, until
// stop; a batch that fails (the database is down) is sent again, as a
// pipeline would. It returns the views the runs reported stored.
func ingestLoop(bin, url, dir string, w int, stop <-chan struct{}, errs chan<- error) []viewKey {
	var done []viewKey
	for batch := 0; ; batch++ {
		select {
		case <-stop:
			return done
		default:
		}
		var lines []string
		var keys []viewKey
		for i := range 5 {
			k := viewKey{fmt.Sprintf("P-scale-%d-%d", w, i), fmt.Sprintf("v%d-%d", batch, i)}
			keys = append(keys, k)
			lines = append(lines, scaleView(k.pid, k.vid, batch))
		}
		f := filepath.Join(dir, fmt.Sprintf("w%d-b%d.jsonl", w, batch))
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			report(errs, err)
			return done
		}
		for tries := 1; ; tries++ {
			cmd := exec.Command(bin, "--db", url, "--json", "--axes", "0", f)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err == nil {
				// Unchanged counts a retried batch whose first commit
				// landed although its process saw the connection drop.
				var rep struct{ Stored, Unchanged int }
				if json.Unmarshal(out, &rep) != nil || rep.Stored+rep.Unchanged != len(keys) {
					report(errs, fmt.Errorf("ingest %d batch %d: %s", w, batch, out))
					return done
				}
				done = append(done, keys...)
				break
			}
			// 4: the ledger could not be written (the database is down);
			// an outage lasts seconds, not the 10 s of 50 tries.
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 || tries == 50 {
				report(errs, fmt.Errorf("ingest %d batch %d (try %d): %v %s %s", w, batch, tries, err, out, stderr.String()))
				return done
			}
			select {
			case <-stop:
				return done
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// answered is one call a replica answered.
type answered struct {
	tool, pid string
	out       map[string]any
}

// TestScaleOut: one PostgreSQL database, three ewp-mcp replicas over
// HTTP, two ewp-ingest processes writing views concurrently, and clients
// spreading warrant_now and may_act calls over the replicas; mid-run one
// replica is killed with SIGKILL (and started again) and the database is
// stopped for two seconds and started. Afterwards: every answered call
// was right (its warrant is the kernel's on the very snapshot it names),
// every failure during the outage was EWP_STORE_UNAVAILABLE (or the
// killed replica's refused connection), the replicas answered again
// after the outage without a restart, every view an ingest reported is
// in the ledger, verify passes, and a single-use approval presented to
// all three replicas at once was honoured exactly once.
func TestScaleOut(t *testing.T) {
	cluster := pgtest.Get(t)
	url := pgtest.DB(t)
	ingestBin, auditBin := buildIngest(t), buildAudit(t)
	if out, err := exec.Command(ingestBin, "copy", "--from", demoLedgerFile(t), "--to", url).CombinedOutput(); err != nil {
		t.Fatalf("copy the demo ledger: %v\n%s", err, out)
	}
	replicaURL, ingestURL := logins(t, url)
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	replicaArgs := []string{"--db", replicaURL, "--policies", policies, "--http", "127.0.0.1:0", "--request-timeout", "8s", "--operator-keys", keysFile(t)}
	replicas := []*mcpProcess{startMCP(t, replicaArgs...), startMCP(t, replicaArgs...), startMCP(t, replicaArgs...)}
	var urls [3]atomic.Value
	for i, r := range replicas {
		urls[i].Store(r.url)
	}

	stop := make(chan struct{})
	errs := make(chan error, 100)
	dir := t.TempDir()
	var wg sync.WaitGroup
	written := make([][]viewKey, 2)
	for w := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); written[w] = ingestLoop(ingestBin, ingestURL, dir, w, stop, errs) }()
	}
	var mu sync.Mutex
	var answers []answered
	var unavailable, refusedConn, afterOutage atomic.Int64
	var outageOver atomic.Bool
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tool, pid := "warrant_now", fmt.Sprintf("P-scale-%d-%d", n%2, n%5)
				args := map[string]any{"proposition_id": pid, "evaluated_at": "2026-09-10T00:00:00Z"}
				if n%3 == 2 {
					tool = "may_act"
					args = map[string]any{"proposition_id": pid, "action": map[string]any{"action_id": "a", "kind": "read", "risk": "low", "reversible": true}}
				}
				b, err := post(urls[(c+n)%3].Load().(string), callBody(n, tool, args))
				if err != nil {
					refusedConn.Add(1) // the killed replica
					time.Sleep(20 * time.Millisecond)
					continue
				}
				_, r, err := parseReply(b)
				if err != nil {
					report(errs, err)
					continue
				}
				switch r.code {
				case "":
					mu.Lock()
					answers = append(answers, answered{tool, pid, r.out})
					mu.Unlock()
					if outageOver.Load() {
						afterOutage.Add(1)
					}
				case "EWP_STORE_UNAVAILABLE":
					if unavailable.Add(1) == 1 {
						t.Logf("first EWP_STORE_UNAVAILABLE: %s", b)
					}
				case "EWP_REFUSE_MISSING_VIEW": // not ingested yet
				default:
					report(errs, fmt.Errorf("%s on %s: %s %v", tool, pid, r.code, string(b)))
				}
			}
		}()
	}

	time.Sleep(5 * time.Second)
	_ = replicas[2].cmd.Process.Kill() // SIGKILL
	time.Sleep(2 * time.Second)
	cluster.Stop(t)
	time.Sleep(2 * time.Second)
	cluster.Start(t)
	replicas[2] = startMCP(t, replicaArgs...)
	urls[2].Store(replicas[2].url)
	outageOver.Store(true)
	time.Sleep(6 * time.Second)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d calls answered (%d after the outage), %d EWP_STORE_UNAVAILABLE, %d refused connections; %d+%d views ingested",
		len(answers), afterOutage.Load(), unavailable.Load(), refusedConn.Load(), len(written[0]), len(written[1]))
	if afterOutage.Load() == 0 {
		t.Error("no call was answered after the database came back: the replicas did not recover")
	}

	ctx := context.Background()
	l, err := postgres.Open(ctx, url, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkAnswers(t, ctx, l, answers)
	for w, keys := range written {
		if len(keys) == 0 {
			t.Errorf("ingest %d wrote nothing", w)
		}
		for _, k := range keys {
			if _, err := l.Get(ctx, k.pid, k.vid); err != nil {
				t.Errorf("ingest %d reported %s/%s stored, the ledger says: %v", w, k.pid, k.vid, err)
			}
		}
	}
	if out, err := exec.Command(ingestBin, "verify", "--db", url).CombinedOutput(); err != nil {
		t.Errorf("verify: %v\n%s", err, out)
	}
	singleUseAcrossReplicas(t, auditBin, url, replicas)
}

// logins makes a login in ewp_server for the replicas and one in
// ewp_writer for the ingests, as docs/scale-out.md tells operators to, and
// returns the database URL with each; they are dropped when t ends.
func logins(t *testing.T, url string) (replica, ingest string) {
	t.Helper()
	ctx := context.Background()
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano())
	mcpRole, ingestRole := "mcp_"+suffix, "ingest_"+suffix
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{
		`CREATE ROLE ` + mcpRole + ` LOGIN IN ROLE ewp_server`,
		`CREATE ROLE ` + ingestRole + ` LOGIN IN ROLE ewp_writer`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, r := range []string{mcpRole, ingestRole} {
			_, _ = c.Exec(context.Background(), `DROP OWNED BY `+r)
			_, _ = c.Exec(context.Background(), `DROP ROLE `+r)
		}
	})
	return pgtest.WithUser(url, mcpRole), pgtest.WithUser(url, ingestRole)
}

// checkAnswers re-derives every answered call with the warrant kernel
// from the snapshot the answer names.
func checkAnswers(t *testing.T, ctx context.Context, l *postgres.Ledger, answers []answered) {
	t.Helper()
	if len(answers) < 50 {
		t.Errorf("only %d calls answered", len(answers))
	}
	for _, a := range answers {
		vid, _ := a.out["view_id"].(string)
		at, _ := a.out["evaluated_at"].(string)
		v, err := l.Get(ctx, a.pid, vid)
		if err != nil {
			t.Errorf("%s answered on %s/%s, which is not stored: %v", a.tool, a.pid, vid, err)
			continue
		}
		wv, err := warrant.Evaluate(v, at)
		if err != nil {
			t.Errorf("%s/%s: %v", a.pid, vid, err)
			continue
		}
		want, _ := json.Marshal(wv.Warrant)
		var wantAxes map[string]any
		_ = json.Unmarshal(want, &wantAxes)
		if !reflect.DeepEqual(a.out["warrant"], wantAxes) {
			t.Errorf("%s on %s/%s at %s: answered %v, the kernel says %v", a.tool, a.pid, vid, at, a.out["warrant"], wantAxes)
		}
		if a.tool == "may_act" {
			d, err := warrant.MayAct(wv.Warrant, warrant.Action{ActionID: "a", Kind: "read", Risk: warrant.RiskLow, Reversible: true}, warrant.DefaultRiskPolicy())
			if err != nil || string(d.Decision) != a.out["decision"] {
				t.Errorf("may_act on %s/%s: answered %v, the kernel says %v (%v)", a.pid, vid, a.out["decision"], d.Decision, err)
			}
		}
	}
}

// singleUseAcrossReplicas: a REQUIRE_CONFIRMATION decision approved once
// (ewp-audit approve --once on the same database), then presented by 8
// callers to each of the three replicas at the same moment: exactly one
// MAY_ACT, the others APPROVAL_USED.
func singleUseAcrossReplicas(t *testing.T, auditBin, url string, replicas []*mcpProcess) {
	t.Helper()
	protected := deleteOn("P-api-cert-valid", "rm", "protected/report.txt")
	first := replicas[0].call("may_act", protected)
	asked, _ := first.out["decision_id"].(string)
	if first.out["decision"] != "REQUIRE_CONFIRMATION" || asked == "" {
		t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", first)
	}
	ap := approvalID(t, operator(t, auditBin, url, "approve", asked, "--once", "--key", opKey(t, "alice"), "--json"))
	const per = 8
	outs := make([]toolReply, 3*per)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			b, err := post(replicas[i%3].url, callBody(i+100, "may_act", with(protected, "approval_id", ap)))
			if err != nil {
				t.Error(err)
				return
			}
			if _, outs[i], err = parseReply(b); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	allowed, used := 0, 0
	for _, r := range outs {
		_, why := approvalLayerOf(r.out)
		switch {
		case r.out["decision"] == "MAY_ACT" && strings.HasPrefix(why, "APPROVED:"):
			allowed++
		case r.out["decision"] == "REQUIRE_CONFIRMATION" && strings.HasPrefix(why, "APPROVAL_USED:"):
			used++
		default:
			t.Errorf("unexpected answer: %+v", r)
		}
	}
	if allowed != 1 || used != len(outs)-1 {
		t.Fatalf("%d MAY_ACT and %d APPROVAL_USED of %d calls over three replicas with one single-use approval", allowed, used, len(outs))
	}
	operator(t, auditBin, url, "verify")
}
