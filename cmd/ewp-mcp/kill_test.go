package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the tamperer's own connection to the log

	"github.com/ewp-go/ewp/fixtures"
)

// loadUntilKilled runs clients concurrent may_act callers against url
// until the server stops answering, and returns every decision_id a
// client received. kill is called once, after warmup.
func loadUntilKilled(t *testing.T, url string, clients int, warmup time.Duration, kill func()) []string {
	t.Helper()
	calls := []map[string]any{ // confirmation, allowed and denied, with and without evidence
		deleteOn("P-api-cert-valid", "rm", "protected/report.txt"), deleteOn("", "rm", "/tmp/notes.txt"),
		deleteOn("", "rm", "/etc/hosts"), deleteOn("P-db-major-version", "rm", "/tmp/x"),
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var mu sync.Mutex
	var received []string
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				resp, err := hc.Post(url, "application/json", strings.NewReader(callBody(i+1, "may_act", calls[(c+i)%len(calls)])))
				if err != nil {
					return // the server is gone
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				var m struct {
					Result struct {
						Structured struct {
							DecisionID string `json:"decision_id"`
						} `json:"structuredContent"`
					} `json:"result"`
				}
				if err != nil || json.Unmarshal(body, &m) != nil {
					return // cut off mid-answer: nothing was received
				}
				if id := m.Result.Structured.DecisionID; id != "" {
					mu.Lock()
					received = append(received, id)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(warmup)
	kill()
	wg.Wait()
	return received
}

// kill -9 of ewp-mcp under load: every decision_id a client received is in
// the decision log afterwards (Record commits before the answer is sent),
// and ewp-audit verify passes on what the killed process left; then an
// edited row (its append-only trigger dropped first) fails verify.
func TestKillUnderLoad(t *testing.T) {
	bin := buildAudit(t)
	db := demoLedgerFile(t)
	p := startMCP(t, "--db", db, "--policies", writePolicies(t, string(fixtures.DemoPolicies)), "--http", "127.0.0.1:0")
	received := loadUntilKilled(t, p.url, 8, 1500*time.Millisecond, func() {
		if err := p.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
			t.Fatal(err)
		}
		_ = p.cmd.Wait()
	})
	if len(received) < 50 {
		t.Fatalf("only %d answers before the kill; the load did not run", len(received))
	}

	onRecord := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(operator(t, bin, db, "export")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			ID string `json:"decision_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		onRecord[d.ID] = true
	}
	missing := 0
	for _, id := range received {
		if !onRecord[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d decision_ids a client received are not in the log after kill -9", missing, len(received))
	}
	t.Logf("%d decisions answered before kill -9, all on record (%d on record in all)", len(received), len(onRecord))
	operator(t, bin, db, "verify")

	tamper(t, db+".audit")
	out, err := exec.Command(bin, "verify", "--db", db).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "decisions") {
		t.Fatalf("ewp-audit verify passed an edited log (%v):\n%s", err, out)
	}
	t.Logf("verify after the edit: %s", strings.TrimSpace(string(out)))
}

// tamper turns a recorded refusal or confirmation into MAY_ACT with its
// own connection, as someone with write access to the file could: the
// append-only trigger is dropped, the row edited, the trigger put back.
func tamper(t *testing.T, path string) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	var trigger string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'decisions_no_UPDATE'`).Scan(&trigger); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER decisions_no_UPDATE`,
		`UPDATE decisions SET outcome = 'MAY_ACT' WHERE seq = (SELECT MIN(seq) FROM decisions WHERE outcome <> 'MAY_ACT')`,
		trigger,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
