package sqlite_test

import (
	"context"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// An append carrying a lone surrogate (WTF-8, as the kernel keeps it) is
// refused like a put: the shared table covers puts on both stores.
func TestAppendRefusesLoneSurrogate(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	put(t, l, decode(t, viewP))
	e := warrant.Evidence{EvidenceID: "e2", Polarity: warrant.Opposes, Content: "psql says \xed\xa0\x80",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h2", ObservedAt: "2026-09-20T00:00:00Z"}}
	_, err := l.AppendEvidence(ctx, "P-db", e)
	if we := wantCode(t, err, warrant.CodeLoneSurrogate); we.Field != "evidence[1].content" {
		t.Fatalf("field %q, want evidence[1].content", we.Field)
	}
	e.Content, e.EvidenceID = "fine", "e\xed\xb0\x80"
	_, err = l.AppendEvidence(ctx, "P-db", e)
	wantCode(t, err, warrant.CodeLoneSurrogate)
	if h, _ := l.History(ctx, "P-db"); len(h) != 1 {
		t.Fatalf("refused appends stored %d snapshots", len(h)-1)
	}
}
