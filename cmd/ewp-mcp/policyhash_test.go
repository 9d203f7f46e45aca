package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

// Every decision records the sha256 of the policy bytes the guard loaded:
// guardOption returns it from the very bytes it parsed (the hash used to
// come from a second read of the file, which may have changed meanwhile),
// and the command passes it to the decision log.
func TestPolicySetHashIsOfTheLoadedBytes(t *testing.T) {
	sum := sha256.Sum256(fixtures.DemoPolicies)
	want := hex.EncodeToString(sum[:])
	db, policies := graphLedger(t), writePolicies(t, string(fixtures.DemoPolicies))

	store, closer, err := openStore(db, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, hash, err := guardOption(context.Background(), config{db: db, policies: policies}, store, quiet); err != nil || hash != want {
		t.Fatalf("guardOption: policy hash %q (%v), want %q", hash, err, want)
	}
	if _, hash, err := guardOption(context.Background(), config{db: db}, store, quiet); err != nil || hash != "" {
		t.Fatalf("without policies: hash %q (%v), want none", hash, err)
	}

	ml := memlog.New(nil)
	sharedLog(t, ml)
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		callBody(1, "may_act", protectedDelete()) + "\n"
	var out, errb syncbuf.Buffer
	if code := run(context.Background(), []string{"--db", db, "--policies", policies}, env(), strings.NewReader(in), &out, &errb, openStore); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got, err := ml.List(context.Background(), audit.Filter{})
	if err != nil || len(got) != 1 || got[0].PolicySetHash != want {
		t.Fatalf("recorded %+v (%v); want policy_set_hash %s", got, err, want)
	}
}
