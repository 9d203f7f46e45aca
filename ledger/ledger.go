package ledger

import (
	"context"
	"fmt"
	"sync"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Ledger is what every store offers (ledger/sqlite, ledger/postgres), and
// what ingest, the MCP server and the concept graph use.
type Ledger interface {
	Put(ctx context.Context, views []*warrant.View) (PutResult, error)
	PutEach(ctx context.Context, n int, view func(i int) (*warrant.View, error)) (PutResult, error)
	PutStream(ctx context.Context, s Stream) (PutResult, error)
	AppendEvidence(ctx context.Context, propositionID string, e warrant.Evidence) (AppendResult, error)
	AppendCheck(ctx context.Context, propositionID string, c warrant.Check) (AppendResult, error)
	Append(ctx context.Context, propositionID string, r snapshot.Records) (AppendResult, error)

	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	LatestSnapshot(ctx context.Context, propositionID string) (*Snapshot, error)
	GetSnapshot(ctx context.Context, propositionID, viewID string) (*Snapshot, error)
	// LatestHashed is Latest with the snapshot's stored canonical_sha256
	// (sha256 of warrant.Canonical(view)), read in the same query: the MCP
	// server records it with each decision.
	LatestHashed(ctx context.Context, propositionID string) (*warrant.View, [32]byte, error)
	LatestViewID(ctx context.Context, propositionID string) (string, error)
	History(ctx context.Context, propositionID string) ([]Snapshot, error)
	List(ctx context.Context, query string, limit int) ([]PropositionSummary, error)

	Head(ctx context.Context) (Head, error)
	Verify(ctx context.Context) (VerifyReport, error)
	VerifyHead(ctx context.Context, h Head) error

	AppendPrimitives(ctx context.Context, validate func(current []PrimitiveRow) ([]PrimitiveRow, error)) error
	CurrentPrimitives(ctx context.Context) ([]PrimitiveRow, error)
	GraphVersion(ctx context.Context) (int64, error)
	PrimitivesSince(ctx context.Context, seq int64) ([]PrimitiveRow, error)

	Path() string
	ReadOnly() bool
	Close() error
}

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
