package ledger

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// The write results are the store-neutral ones of package snapshot.
type (
	PutResult  = snapshot.PutResult
	Outcome    = snapshot.Outcome
	BatchError = snapshot.BatchError
)

// AppendResult is the store-neutral append result of package snapshot.
type AppendResult = snapshot.AppendResult

// Snapshot is a stored snapshot as the ledger holds it.
type Snapshot struct {
	Seq           int64
	PropositionID string
	ViewID        string
	// Body is the stored form (warrant.Encode of the view that was put).
	Body      []byte
	CreatedAt string
}

// View decodes the stored body.
func (s *Snapshot) View() (*warrant.View, error) { return DecodeStored(s.Body) }

// PrimitiveRow is one revision of a concept-graph primitive. The ledger
// keeps it opaque: the grounding package owns the meaning of Body (JSON)
// and of NameFold (the case-folded name it uses for lookups).
type PrimitiveRow struct {
	ID       string
	NameFold string
	Body     []byte
	// Seq is the revision's place in the ledger (its graph version). Reads
	// fill it, so a reader holding the graph at version v can tell which
	// rows are newer; AppendPrimitives ignores it.
	Seq int64
}

// MaxListLimit bounds one List call; discovery is for people and agents,
// not for dumping the ledger.
const MaxListLimit = 500

// PropositionSummary is one discovery hit: never a warrant, only what is
// stored.
type PropositionSummary struct {
	PropositionID string
	LatestViewID  string
	// Texts are the assertion texts of the latest snapshot.
	Texts []string
}

// StreamItem is one view of a PutStream. View produces it (decoding,
// typically) and runs on a worker, ahead of the writer; Size is its text's
// length in bytes, which bounds the memory prepared ahead.
type StreamItem interface {
	View() (*warrant.View, error)
	Size() int
}

// Stream is a source of views whose number is not known up front.
type Stream struct {
	// Next returns the next item, and io.EOF after the last; any other
	// error aborts the batch and is returned as is. It is called from one
	// goroutine, in order, ahead of the writer; PutStream returns only
	// after its last call to Next has returned.
	Next func() (StreamItem, error)
	// Refused, when set, is called in order for each refused view: its
	// View returned an error, or the §9 rules refuse it against what is
	// stored. Returning nil leaves the view out and goes on, io.EOF ends
	// the batch there (the views before it are written), any other error
	// aborts the batch. Without Refused a refusal aborts the batch with a
	// *BatchError, as in PutEach.
	Refused func(it StreamItem, err error) error
	// Stored, when set, is called in order with the outcome of each
	// stored or unchanged view.
	Stored func(it StreamItem, o Outcome)
	// Commit, when set, is called after the batch's last view, before the
	// transaction commits; an error aborts the batch and is returned (a
	// loader that validated every view can still decide on all or
	// nothing).
	Commit func() error
}

// StoredCanonicalSum copies a canonical_sha256 column into sum. A column
// that is not 32 bytes is a ledger failure: the row was changed outside
// the ledger (Verify names it), and a decision must not record it.
func StoredCanonicalSum(sum *[32]byte, col []byte) error {
	if len(col) != len(sum) {
		return &Error{Op: "read snapshot", Err: fmt.Errorf(
			"its canonical_sha256 is %d bytes, not %d: the ledger was changed outside ewp-ingest; run ewp-ingest verify on it", len(col), len(sum))}
	}
	copy(sum[:], col)
	return nil
}

// DecodeStored reads a stored body back. A body the kernel refuses means
// the ledger was edited or written by a broken build: a ledger error, not
// a refusal of the caller's input.
func DecodeStored(body []byte) (*warrant.View, error) {
	d := decoders.Get().(*warrant.Decoder)
	v, err := d.DecodeView(body)
	decoders.Put(d)
	if err != nil {
		return nil, &Error{Op: "decode stored snapshot (run ewp-ingest verify)", Err: err}
	}
	return v, nil
}

// decoders keeps warrant.Decoders for reuse: every MCP call decodes a
// stored view, and a warm decoder allocates about half as much.
var decoders = sync.Pool{New: func() any { return new(warrant.Decoder) }}

// Head names the last event of the hash chain: its sequence number and
// hash. A pipeline that keeps the heads its ingests reported can later
// prove, with VerifyHead, that nothing was cut off the end of the chain,
// which no check from inside the file alone can see.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"` // lower-case hex sha256; "" for an empty ledger
}

// String is the form ewp-ingest prints and `verify --head` takes: SEQ:HASH.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ParseHead reads SEQ:HASH.
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 0 {
		return Head{}, fmt.Errorf("chain head %q: want SEQ:HASH, e.g. 42:9f86d08…, as ewp-ingest printed it", s)
	}
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return Head{}, fmt.Errorf("chain head %q: the hash must be 64 hex digits (a sha256)", s)
	}
	return Head{Seq: n, Hash: strings.ToLower(hash)}, nil
}

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
