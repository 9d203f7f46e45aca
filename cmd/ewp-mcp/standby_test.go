package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestStandbyReplicaActsOnThePrimary: a replica with --standby answers
// warrant_now from the standby, which (its replay paused) still has the
// old snapshot, while may_act decides on the primary's newest one; after
// replay resumes warrant_now sees it too.
func TestStandbyReplicaActsOnThePrimary(t *testing.T) {
	cluster := pgtest.Get(t)
	url := pgtest.DB(t)
	load := ingestInto(t, url, "P-sb")
	load("v1", 0)
	sb := cluster.Standby(t)
	p := startMCP(t, "--db", url, "--standby", sb.On(url), "--audit", "off", "--http", "127.0.0.1:0")
	sb.PauseReplay(t)
	load("v2", 1)
	read := p.call("warrant_now", map[string]any{"proposition_id": "P-sb", "evaluated_at": "2026-09-10T00:00:00Z"})
	act := p.call("may_act", map[string]any{"proposition_id": "P-sb",
		"action": map[string]any{"action_id": "a", "kind": "read", "risk": "low", "reversible": true}})
	if read.out["view_id"] != "v1" || act.out["view_id"] != "v2" {
		t.Fatalf("paused standby: warrant_now on %v (want the standby's v1), may_act on %v (want the primary's v2); %+v %+v",
			read.out["view_id"], act.out["view_id"], read, act)
	}
	sb.ResumeReplay(t)
	sb.WaitCaughtUp(t)
	if read := p.call("warrant_now", map[string]any{"proposition_id": "P-sb", "evaluated_at": "2026-09-10T00:00:00Z"}); read.out["view_id"] != "v2" {
		t.Fatalf("caught-up standby: warrant_now on %v", read.out["view_id"])
	}
}

// ingestInto returns a loader that stores view vid of proposition prop
// (scaleView's batch) in the ledger at url through the ewp-ingest binary,
// as an operator's ingest would while the server runs.
func ingestInto(t *testing.T, url, prop string) func(vid string, batch int) {
	ingestBin := buildIngest(t)
	return func(vid string, batch int) {
		t.Helper()
		f := filepath.Join(t.TempDir(), vid+".json")
		writeFileT(t, f, scaleView(prop, vid, batch))
		if out, err := exec.Command(ingestBin, "--db", url, f).CombinedOutput(); err != nil {
			t.Fatalf("ingest %s: %v\n%s", vid, err, out)
		}
	}
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The operator console serves a PostgreSQL ledger too, and with --standby
// it shows the primary: an operator deciding on the evidence never sees
// it trail what the gate decides on.
func TestConsoleOnPostgresShowsThePrimary(t *testing.T) {
	cluster := pgtest.Get(t)
	url := pgtest.DB(t)
	load := ingestInto(t, url, "P-console")
	load("v1", 0)
	sb := cluster.Standby(t)
	token := "0123456789abcdef-operator"
	base, _ := serveInProcess(t, []string{"--db", url, "--standby", sb.On(url), "--http", "127.0.0.1:0"},
		env("EWP_OPERATOR_TOKEN", token))
	sb.PauseReplay(t)
	load("v2", 1)
	c := signedIn(t, base, token)
	var page string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if page = fetch(t, c, base+"/console/proposition?id=P-console"); strings.Contains(page, "v2") {
			return
		}
	}
	t.Fatalf("the console on a paused standby's server does not show the primary's v2: %.2000s", page)
}
