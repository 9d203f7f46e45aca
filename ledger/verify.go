package ledger

import "fmt"

// VerifyReport is the result of walking the ledger.
type VerifyReport struct {
	Events     int64
	Snapshots  int64
	Primitives int64
	// Head is the chain's last event as verified (Seq 0 for no events);
	// set once the whole chain has been walked.
	Head Head
	// Broken is the first problem found, nil when the ledger is intact.
	Broken *Break
}

// OK reports an intact ledger.
func (r VerifyReport) OK() bool { return r.Broken == nil }

// Break names the first broken or edited event.
type Break struct {
	// Seq is the event's sequence number; 0 when the problem is a row that
	// no event records, or not a row (the schema, ledger_meta, an extra row
	// of a derived table; then RowSeq is 0 too).
	Seq    int64
	Table  string
	RowSeq int64
	What   string
}

func (b *Break) Error() string {
	if b.Seq == 0 && b.RowSeq == 0 {
		return fmt.Sprintf("ledger broken: %s: %s", b.Table, b.What)
	}
	if b.Seq == 0 {
		return fmt.Sprintf("ledger broken: %s row %d: %s", b.Table, b.RowSeq, b.What)
	}
	return fmt.Sprintf("ledger broken at event %d (%s row %d): %s", b.Seq, b.Table, b.RowSeq, b.What)
}
