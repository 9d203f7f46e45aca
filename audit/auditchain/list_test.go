package auditchain

import (
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Numbered placeholders follow the arguments in order, through the seek
// and the limit.
func TestSelectNumbered(t *testing.T) {
	s := ListSQL{Decisions: "x.decisions", Approvals: "x.approvals", EmptyID: "''", Column: "body", Placeholder: Dollar, Bind: func(id string) any { return id }}
	q := Query{Filter: audit.Filter{Since: time.Unix(1, 0), PropositionID: "P", After: "D", Limit: 5}}
	query, args, err := s.Select(q, func(any) (any, bool, error) { return int64(7), true, nil })
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT body FROM x.decisions d WHERE time_ns >= $1 AND proposition_id = $2 AND d.seq > $3 ORDER BY d.seq ASC LIMIT $4`
	if query != want || len(args) != 4 || args[2] != int64(7) {
		t.Fatalf("got %s %v\nwant %s", query, args, want)
	}
	s.Placeholder, s.Column = Question, "event"
	query, _, err = s.Select(q, func(any) (any, bool, error) { return int64(7), true, nil })
	want = `SELECT event FROM x.decisions d WHERE time_ns >= ? AND proposition_id = ? AND d.seq > ? ORDER BY d.seq ASC LIMIT ?`
	if err != nil || query != want {
		t.Fatalf("got %s (%v)\nwant %s", query, err, want)
	}
}

// A page continuing from an unknown decision is audit.ErrNotFound; a
// failed seek is returned as it is.
func TestSelectSeek(t *testing.T) {
	s := ListSQL{Decisions: "decisions", Approvals: "approvals", EmptyID: "''", Column: "event", Placeholder: Question, Bind: func(id string) any { return id }}
	q := Query{Filter: audit.Filter{After: "D"}}
	if _, _, err := s.Select(q, func(any) (any, bool, error) { return nil, false, nil }); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("unknown after: %v", err)
	}
	boom := errors.New("boom")
	if _, _, err := s.Select(q, func(any) (any, bool, error) { return nil, false, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed seek: %v", err)
	}
}
