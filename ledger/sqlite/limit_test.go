package sqlite_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// bigView is viewP under another proposition id with an assertion text of
// n bytes.
func bigView(t *testing.T, prop string, n int) *warrant.View {
	t.Helper()
	r := strings.NewReplacer(`"P-db"`, `"`+prop+`"`, "The production database runs PostgreSQL 13.", strings.Repeat("x", n))
	// The kernel's own limits would refuse the text before the ledger's do.
	d := warrant.Decoder{Limits: warrant.Limits{MaxViewBytes: -1, MaxStringBytes: -1}}
	v, err := d.DecodeView([]byte(r.Replace(viewP)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMaxViewBytesRefusesPut(t *testing.T) {
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db"), sqlite.Options{MaxViewBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	put(t, l, decode(t, viewP))
	_, err = l.Put(context.Background(), []*warrant.View{bigView(t, "P-big", 5000)})
	if we := wantCode(t, err, warrant.CodeLimitExceeded); !strings.Contains(we.Rule, "4096") {
		t.Fatalf("refusal does not name the limit: %v", we)
	}
	e := warrant.Evidence{EvidenceID: "e2", Polarity: warrant.Opposes, Content: strings.Repeat("y", 5000),
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h2", ObservedAt: "2026-09-20T00:00:00Z"}}
	_, err = l.AppendEvidence(context.Background(), "P-db", e)
	wantCode(t, err, warrant.CodeLimitExceeded)
}

// A snapshot stored under a higher limit is refused by a ledger opened
// with a lower one, before its body is read.
func TestMaxViewBytesRefusesRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ewp.db")
	w, err := sqlite.Create(path, sqlite.Options{MaxViewBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	const size = 2 << 20
	put(t, w, decode(t, viewP), bigView(t, "P-big", size))
	w.Close()

	l, err := sqlite.Open(path, sqlite.Options{MaxViewBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Latest(ctx, "P-db"); err != nil {
		t.Fatalf("a small snapshot: %v", err)
	}
	reads := map[string]func() error{
		"Latest":         func() error { _, err := l.Latest(ctx, "P-big"); return err },
		"Get":            func() error { _, err := l.Get(ctx, "P-big", "v1"); return err },
		"LatestSnapshot": func() error { _, err := l.LatestSnapshot(ctx, "P-big"); return err },
		"GetSnapshot":    func() error { _, err := l.GetSnapshot(ctx, "P-big", "v1"); return err },
		"AppendCheck": func() error {
			_, err := l.AppendCheck(ctx, "P-big", warrant.Check{CheckID: "k", Method: "tool_observation", Scope: "s", Result: warrant.Supports,
				ObservedAt: "2026-09-02T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-02T00:00:00Z"}})
			return err
		},
	}
	for name, read := range reads {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		if we := wantCode(t, err, warrant.CodeLimitExceeded); !strings.Contains(we.Rule, "P-big") {
			t.Errorf("%s: refusal does not name the snapshot: %v", name, we)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > size/4 {
			t.Errorf("%s allocated %d bytes to refuse an %d-byte body", name, got, size)
		}
	}
	if ids := listIDs(t, l, "xxxxx"); len(ids) != 0 {
		t.Errorf("List returned an unreadable snapshot: %v", ids)
	}
}
