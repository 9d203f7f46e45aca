package auditchain

import (
	"strconv"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// PrepareRecord fills an empty id and time (in UTC) from what the store
// passes, and its payload halves rebuild the row's payload around a seq.
func TestPrepareRecord(t *testing.T) {
	at := time.Date(2026, 9, 1, 14, 0, 0, 0, time.FixedZone("X", 2*3600))
	d := &audit.Decision{Tool: "may_act", Outcome: audit.OutcomeDeny}
	r, err := PrepareRecord(d, func() time.Time { return at }, func() string { return "id-1" })
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "id-1" || !d.Time.Equal(at) || d.Time.Location() != time.UTC {
		t.Fatalf("decision %+v", d)
	}
	row := r.Row
	row.Seq = 7
	if got := string(r.Pre) + strconv.Itoa(7) + string(r.Post); got != string(row.Payload()) {
		t.Fatalf("payload halves %q, want %q", got, row.Payload())
	}
	if _, err := PrepareRecord(&audit.Decision{Outcome: audit.OutcomeDeny}, time.Now, func() string { return "x" }); err == nil {
		t.Fatal("a decision without a tool was prepared")
	}
}
