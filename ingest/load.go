package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// GraphLoader loads a concept-graph document ({"graph": ..., "primitives":
// [...]}) into the ledger and returns a one-line summary. The grounding
// package provides it; ingest only routes the document.
type GraphLoader func(ctx context.Context, l graphstore.Ledger, raw []byte) (string, error)

// Ledger is what a Loader needs of a ledger: the SQLite one
// (ledger/sqlite) or the PostgreSQL one (ledger/postgres), both opened
// by store.Open, with the concept graph's methods GraphLoader needs.
type Ledger interface {
	PutStream(ctx context.Context, s ledger.Stream) (ledger.PutResult, error)
	Head(ctx context.Context) (ledger.Head, error)
	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	graphstore.Ledger
}

// Options configure a Loader.
type Options struct {
	// AttestTrustedOrigins is --attest-trusted-origins: the operator vouches
	// for records whose origin_type is trusted (§10).
	AttestTrustedOrigins bool
	// Partial stores the valid views of an input and reports the rest;
	// otherwise a file with any refused view is not written at all, and a
	// stream stops at its first refused view.
	Partial bool
	// Limits bound each view; zero fields mean warrant.DefaultLimits.
	// MaxViewBytes is enforced while the input is split, the others by the
	// kernel's decoder.
	Limits warrant.Limits
	// BatchViews and BatchEvery bound a stream's batches: each commits
	// after this many views or this long after it began, whichever comes
	// first (defaults DefaultBatchViews, DefaultBatchEvery).
	BatchViews int
	BatchEvery time.Duration
	// Graph routes graph documents; nil refuses them with a clear message.
	Graph GraphLoader
	// Strict refuses a view with a member the published schema does not
	// name or with no records at all (CodeUnknownKey, CodeEmptyView),
	// as any refused view: otherwise such a view is stored with a warning.
	Strict bool
	// OnWarning, when set, is told each warning of a stream as it is
	// found, as OnRefusal is told refusals.
	OnWarning func(Refusal)
	// OnRefusal, when set, is told each refusal of a stream as it is
	// found (the report lists them too, at the end), so whoever runs a
	// long-lived pipeline sees them at once.
	OnRefusal func(Refusal)
	// Progress, when set, is told how many bytes of an input have been
	// read (done) of its size (total; 0 when unknown) while it loads.
	Progress func(file, phase string, done, total int64)
}

// Stream batches, by default: a view piped in is visible to readers
// within about BatchEvery of its arrival, and commits (each an fsync)
// stay few on a fast stream.
const (
	DefaultBatchViews = 10_000
	DefaultBatchEvery = 200 * time.Millisecond
)

// Loader loads inputs into a ledger. It is not safe for concurrent use.
type Loader struct {
	L       Ledger
	Opt     Options
	touched *propSet
	pool    sync.Pool // *warrant.Decoder
}

// FileReport is what happened to one input.
type FileReport struct {
	Name   string `json:"file"`
	Format Format `json:"format,omitempty"`
	Views  int    `json:"views"`
	// Written is false when nothing of the input was stored.
	Written   bool      `json:"written"`
	Stored    int       `json:"stored"`
	Unchanged int       `json:"unchanged"`
	Refused   []Refusal `json:"refused"`
	// RefusedOmitted counts refusals beyond the maxKeptRefusals listed.
	RefusedOmitted int `json:"refused_omitted,omitempty"`
	// Warnings are what Options.Strict would refuse in the views taken
	// (an unknown key, an empty view), in input order; WarningsOmitted
	// counts those beyond the maxKeptRefusals listed.
	Warnings        []Refusal `json:"warnings"`
	WarningsOmitted int       `json:"warnings_omitted,omitempty"`
	// Stream says the input was loaded as a stream, committed in batches
	// (standard input, a pipe), not as one transaction.
	Stream bool `json:"stream"`
	// Stopped is set when a stream without --partial stopped at a refused
	// view: the views before it are stored, nothing after it was read.
	Stopped bool   `json:"stopped,omitempty"`
	Graph   string `json:"graph,omitempty"`
	touched *propSet
}

// Outcome is one stored (or unchanged) view.
type Outcome = ledger.Outcome

// Refusal names a refused view: the file, where in it, and the EWP error.
type Refusal struct {
	File  string `json:"file"`
	Where string `json:"where,omitempty"` // "line 12", "[3] (line 40)", "views[3] (line 40)"
	Line  int    `json:"line,omitempty"`
	Index *int   `json:"index,omitempty"`
	Code  string `json:"error"`
	Field string `json:"field,omitempty"`
	Rule  string `json:"message"`
	// Pointer is the refusal's location as an RFC 6901 JSON pointer into
	// the view, and More the further problems the JSON Schema finds in it
	// (see explainRefusals); both only for views the kernel refused.
	Pointer string   `json:"pointer,omitempty"`
	More    []string `json:"more,omitempty"`
}

func (r Refusal) String() string {
	loc := r.File
	if r.Where != "" {
		loc += ": " + r.Where
	}
	if r.Field != "" {
		return fmt.Sprintf("%s: %s: %s: %s", loc, r.Code, r.Field, r.Rule) + r.schemaNote()
	}
	return fmt.Sprintf("%s: %s: %s", loc, r.Code, r.Rule) + r.schemaNote()
}

// Input is one input to load.
type Input struct {
	Name string
	R    io.Reader
	// Size is the input's length when known (a regular file), for progress.
	Size int64
	// Stream commits views in batches as they arrive (standard input, a
	// pipe); otherwise the input is one transaction, whole or nothing.
	Stream bool
}

// LoadFile validates and stores an input held in memory, as one
// transaction. It returns an error only for ledger failures; refusals are
// in the report.
func (ld *Loader) LoadFile(ctx context.Context, name string, data []byte) (FileReport, error) {
	return ld.Load(ctx, Input{Name: name, R: bytes.NewReader(data), Size: int64(len(data))})
}

// Load validates and stores the views read from in.R, in memory bounded
// whatever its size: the input is split as it is read, views are decoded
// on every core and written in order (ledger.PutStream).
//
// A file (in.Stream false) is one transaction: stored whole or, when any
// view is refused, not at all (every refusal is reported); with Partial
// its valid views are stored. A stream commits in batches as views arrive
// (Options.BatchViews, BatchEvery), so readers see each view soon after
// it arrives; without Partial, the first refused view stops it: the views
// before it are stored, nothing after it is read. A stream stopped early
// may leave a goroutine blocked reading in.R until that returns.
//
// Load returns an error only for ledger failures; refusals are in the
// report.
func (ld *Loader) Load(ctx context.Context, in Input) (FileReport, error) {
	if ld.touched == nil {
		ld.touched = newPropSet()
	}
	l := &load{ld: ld, in: in, rep: FileReport{Name: in.Name, Stream: in.Stream, Refused: []Refusal{}, Warnings: []Refusal{}, touched: ld.touched}}
	l.start()
	defer close(l.quit)
	err := l.run(ctx)
	l.finish()
	return l.rep, err
}

// errRefusedFile aborts a file's transaction after a refusal, once every
// view has been validated.
var errRefusedFile = errors.New("the input has refused views")

// load is one input on its way into the ledger.
type load struct {
	ld     *Loader
	in     Input
	rep    FileReport
	items  chan []Item
	end    chan splitEnd
	quit   chan struct{}
	buf    []Item       // items received and not yet taken
	views  int          // items taken
	split  splitEnd     // set when ended
	read   atomic.Int64 // bytes read, for progress
	format Format
	// failed is set at a file's first refusal without Partial: the rest is
	// validated, so every refusal is reported, and nothing is stored.
	failed atomic.Bool
	// stopped is set when a stream stops at a refused view.
	stopped   atomic.Bool
	ended     bool // the splitter has finished
	explained int
}

// splitEnd is how the splitter ended: the input's format and its error.
type splitEnd struct {
	format Format
	err    error
}

// itemBatch is how many items the splitter hands over at once; it hands
// over fewer whenever it is about to wait for input, so a stream's views
// are not held back.
const itemBatch = 64

// start runs the splitter on its own goroutine, feeding l.items.
func (l *load) start() {
	l.items, l.end, l.quit = make(chan []Item, 4), make(chan splitEnd, 1), make(chan struct{})
	opt := SplitOptions{MaxViewBytes: l.ld.Opt.Limits.MaxViewBytes}
	if opt.MaxViewBytes < 0 {
		opt.MaxViewBytes = math.MaxInt
	}
	var batch []Item
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		select {
		case l.items <- batch:
			batch = nil
			return nil
		case <-l.quit:
			return errStopped
		}
	}
	r := &countingReader{r: l.in.R, n: &l.read, before: func() { flush() }} //nolint:errcheck // a stop shows at the next emit
	go func() {
		f, err := SplitReader(r, opt, func(it Item) error {
			if batch = append(batch, it); len(batch) < itemBatch {
				return nil
			}
			return flush()
		})
		if ferr := flush(); err == nil { // the items before an error count too
			err = ferr
		}
		l.end <- splitEnd{f, err}
		close(l.items)
	}()
}

var errStopped = errors.New("stopped")

// take returns the next item, waiting for it (until timeout fires, when
// set); ok is false at the end of the input or on timeout. It runs on
// PutStream's producer goroutine, or on Load's between batches, never on
// both at once.
func (l *load) take(timeout <-chan time.Time) (it Item, ok bool) {
	select {
	case <-timeout: // a batch that is due ends, even with items waiting
		return Item{}, false
	default:
	}
	if len(l.buf) == 0 {
		if l.ended {
			return Item{}, false
		}
		select {
		case l.buf, ok = <-l.items:
		case <-timeout:
			return Item{}, false
		}
		if !ok {
			l.ended, l.split = true, <-l.end
			return Item{}, false
		}
	}
	it, l.buf = l.buf[0], l.buf[1:]
	l.views++
	return it, true
}

// splitRefusal reports how splitting ended: an input that could not be
// read to its end is a refusal of the rest of it.
func (l *load) splitRefusal() {
	l.format = l.split.format
	e := l.split.err
	if e == nil || errors.Is(e, errStopped) {
		return
	}
	r := Refusal{File: l.in.Name, Code: warrant.CodeInvalidView, Rule: "cannot split the input into views: " + e.Error()}
	if l.views > 0 {
		r.Rule += fmt.Sprintf(" (the input cannot be read past this point; %s came before it)", plural.Count(l.views, "view", "views"))
	}
	var se *SyntaxError
	if errors.As(e, &se) {
		r.Line = se.Line
	}
	l.refuse(r, l.format)
}

func (l *load) run(ctx context.Context) error {
	first, ok := l.take(nil)
	if !ok {
		return nil
	}
	if first.Graph {
		return l.loadGraph(ctx, first)
	}
	if l.in.Stream {
		return l.stream(ctx, first)
	}
	return l.file(ctx, first)
}

// file stores the whole input as one transaction.
func (l *load) file(ctx context.Context, first Item) error {
	pending := &first
	res, err := l.ld.L.PutStream(ctx, ledger.Stream{
		Next: func() (ledger.StreamItem, error) {
			if it, ok := l.next(&pending, nil); ok {
				return &job{it: it, l: l}, nil
			}
			return nil, io.EOF
		},
		Refused: l.refused,
		Stored:  l.stored,
		Commit: func() error {
			unsplit := l.split.err != nil && !errors.Is(l.split.err, errStopped)
			if l.failed.Load() || ((unsplit || len(l.rep.Refused) > 0) && !l.ld.Opt.Partial) {
				return errRefusedFile // every view validated, every refusal reported
			}
			return nil
		},
	})
	if errors.Is(err, errRefusedFile) {
		return nil
	}
	if err != nil {
		return err
	}
	l.committed(res)
	return nil
}

// next returns *pending first, then the next item.
func (l *load) next(pending **Item, timeout <-chan time.Time) (Item, bool) {
	if *pending != nil {
		it := **pending
		*pending = nil
		return it, true
	}
	return l.take(timeout)
}

// stream commits batches as views arrive. It waits for a batch's first
// view outside any transaction, so an idle pipe holds no write lock.
func (l *load) stream(ctx context.Context, first Item) error {
	every, most := l.ld.Opt.BatchEvery, l.ld.Opt.BatchViews
	if every <= 0 {
		every = DefaultBatchEvery
	}
	if most <= 0 {
		most = DefaultBatchViews
	}
	pending := &first
	for pending != nil && !l.stopped.Load() {
		timer := time.NewTimer(every)
		n := 0
		res, err := l.ld.L.PutStream(ctx, ledger.Stream{
			Next: func() (ledger.StreamItem, error) {
				if n == most || l.stopped.Load() {
					return nil, io.EOF
				}
				it, ok := l.next(&pending, timer.C)
				if !ok {
					return nil, io.EOF
				}
				n++
				return &job{it: it, l: l}, nil
			},
			Refused: l.refused,
			Stored:  l.stored,
		})
		timer.Stop()
		if err != nil {
			return err
		}
		l.committed(res)
		if l.stopped.Load() || l.ended {
			return nil
		}
		if it, ok := l.take(nil); ok {
			pending = &it
		} else {
			pending = nil
		}
	}
	return nil
}

func (l *load) committed(res ledger.PutResult) {
	l.rep.Stored += res.Stored
	l.rep.Unchanged += res.Unchanged
	l.rep.Written = l.rep.Written || res.Stored > 0 || res.Unchanged > 0
}

// stored is PutStream's outcome callback: it counts the proposition
// touched and reports progress.
func (l *load) stored(si ledger.StreamItem, o ledger.Outcome) {
	l.rep.touched.add(o.PropositionID)
	for _, w := range si.(*job).warns {
		l.warn(w)
	}
	if o.Index%1024 == 1023 && l.ld.Opt.Progress != nil {
		l.ld.Opt.Progress(l.in.Name, "loading", l.read.Load(), l.in.Size)
	}
}

// refused is PutStream's refusal callback, called in input order.
func (l *load) refused(si ledger.StreamItem, err error) error {
	j := si.(*job)
	we := asWarrantError(err)
	r := refusalOf(l.in.Name, j.it, we)
	if l.explained < maxExplained && j.it.Raw != nil && (we.Code == warrant.CodeInvalidView || we.Code == warrant.CodeUnknownPolicy) {
		explain(&r, j.it.Raw)
		l.explained++
	}
	l.refuse(r, j.it.format)
	switch {
	case l.ld.Opt.Partial:
		return nil
	case l.in.Stream:
		l.stopped.Store(true)
		return io.EOF
	}
	l.failed.Store(true)
	return nil
}

// maxKeptRefusals bounds the refusals a report lists per input (a stream
// of bad lines must not fill memory); the rest are counted.
const maxKeptRefusals = 10_000

// refuse records a refusal; format is the input's as known so far, for
// telling a stream's refusal at once.
func (l *load) refuse(r Refusal, format Format) {
	if l.in.Stream && l.ld.Opt.OnRefusal != nil {
		now := r
		now.Where = where(format, r)
		l.ld.Opt.OnRefusal(now)
	}
	if len(l.rep.Refused) == maxKeptRefusals {
		l.rep.RefusedOmitted++
		return
	}
	l.rep.Refused = append(l.rep.Refused, r)
}

// warn records a warning, telling a stream's at once.
func (l *load) warn(w Refusal) {
	if l.in.Stream && l.ld.Opt.OnWarning != nil {
		l.ld.Opt.OnWarning(w)
	}
	if len(l.rep.Warnings) == maxKeptRefusals {
		l.rep.WarningsOmitted++
		return
	}
	l.rep.Warnings = append(l.rep.Warnings, w)
}

// finish locates the refusals the way the input's format numbers items,
// now that the format is known, and drops a failed file's counts.
func (l *load) finish() {
	l.splitRefusal()
	unsplit := l.split.err != nil && !errors.Is(l.split.err, errStopped)
	if unsplit && l.in.Stream && !l.ld.Opt.Partial && l.rep.Written {
		l.stopped.Store(true) // a stream that cannot be read on stops like one with a refused view
	}
	l.rep.Views, l.rep.Stopped = l.views, l.stopped.Load()
	if l.rep.Format == "" {
		l.rep.Format = l.format
	}
	if l.rep.Format == "" && l.views > 0 {
		l.rep.Format = FormatLines
	}
	for i := range l.rep.Refused {
		l.rep.Refused[i].Where = where(l.rep.Format, l.rep.Refused[i])
	}
	for i := range l.rep.Warnings {
		l.rep.Warnings[i].Where = where(l.rep.Format, l.rep.Warnings[i])
	}
	sortRefusals(l.rep.Refused)
}

// job is one item on its way through PutStream; View runs on a worker.
type job struct {
	it    Item
	l     *load
	warns []Refusal // set by View on a worker, read by stored in order
}

func (j *job) Size() int { return len(j.it.Raw) }

func (j *job) View() (*warrant.View, error) {
	var v *warrant.View
	var err error
	switch {
	case j.it.Err != nil:
		err = &warrant.Error{Code: warrant.CodeInvalidView, Rule: "not JSON: " + j.it.Err.Error()}
	case j.it.TooLarge:
		err = &warrant.Error{Code: warrant.CodeLimitExceeded, Rule: fmt.Sprintf(
			"the view is %d bytes of JSON text, over the limit of %d (--max-view-bytes); split its records over several views", j.it.Size, j.l.maxViewBytes())}
	default:
		d := j.l.ld.decoder()
		v, err = decodeWith(d, j.it.Raw, j.l.ld.Opt.AttestTrustedOrigins)
		j.l.ld.pool.Put(d)
		if err == nil {
			j.warns = lint(j.l.in.Name, j.it, v)
			if len(j.warns) > 0 && j.l.ld.Opt.Strict {
				err = strictRefusal(j.warns)
			}
		}
	}
	if err != nil {
		if !j.l.ld.Opt.Partial && !j.l.in.Stream {
			j.l.failed.Store(true) // stop storing at once; the writer reports it in order
		}
		return nil, err
	}
	if j.l.failed.Load() {
		return nil, nil // validated; a refused file stores nothing
	}
	return v, nil
}

func (l *load) maxViewBytes() int {
	if n := l.ld.Opt.Limits.MaxViewBytes; n != 0 {
		return n
	}
	return defaultMaxViewBytes()
}

// decoder returns a kernel decoder with the loader's limits, from a pool
// (a Decoder reuses its scratch memory, and is not safe for concurrent use).
func (ld *Loader) decoder() *warrant.Decoder {
	if d, ok := ld.pool.Get().(*warrant.Decoder); ok {
		return d
	}
	return &warrant.Decoder{Limits: ld.Opt.Limits}
}

func asWarrantError(err error) *warrant.Error {
	var we *warrant.Error
	if errors.As(err, &we) {
		return we
	}
	return &warrant.Error{Code: warrant.CodeInvalidView, Rule: err.Error()}
}

// countingReader counts the bytes read, for progress, and calls before
// ahead of each read, which may wait for input.
type countingReader struct {
	r      io.Reader
	n      *atomic.Int64
	before func()
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.before()
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (l *load) loadGraph(ctx context.Context, it Item) error {
	l.rep.Format = FormatGraph
	if l.ld.Opt.Graph == nil {
		l.refuse(Refusal{File: l.in.Name, Line: it.Line, Code: warrant.CodeInvalidView,
			Rule: `this is a concept-graph document ({"graph": ..., "primitives": [...]}); this build of ewp-ingest has no grounding loader wired in, so it loads EvidenceViews only`}, FormatGraph)
		return nil
	}
	summary, err := l.ld.Opt.Graph(ctx, l.ld.L, it.Raw)
	if err != nil {
		var le *ledger.Error
		if errors.As(err, &le) {
			return err
		}
		l.refuse(graphRefusal(l.in.Name, it.Line, err), FormatGraph)
		return nil
	}
	l.rep.Written, l.rep.Graph = true, summary
	return nil
}

// graphRefusal reports a refused graph document. A *warrant.Error keeps its
// code, field and rule apart, so the printed line does not repeat the code.
func graphRefusal(file string, line int, err error) Refusal {
	var we *warrant.Error
	if errors.As(err, &we) {
		return Refusal{File: file, Line: line, Code: we.Code, Field: we.Field, Rule: we.Rule}
	}
	return Refusal{File: file, Line: line, Code: codeOf(err), Rule: err.Error()}
}

// sortRefusals orders refusals by their place in the file.
func sortRefusals(rs []Refusal) {
	slices.SortStableFunc(rs, func(a, b Refusal) int { return a.Line - b.Line })
}

func codeOf(err error) string {
	var we *warrant.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return warrant.CodeInvalidView
}

// refusalOf records where a refused item is: its line (a syntax error's
// own) and its index in a list.
func refusalOf(file string, it Item, we *warrant.Error) Refusal {
	r := Refusal{File: file, Line: it.Line, Code: we.Code, Field: we.Field, Rule: we.Rule}
	if it.Err != nil {
		r.Line = it.Err.Line
	}
	if it.Index >= 0 {
		idx := it.Index
		r.Index = &idx
	}
	return r
}

// where locates a refusal the way its input's format numbers items.
func where(f Format, r Refusal) string {
	switch {
	case r.Index != nil && f == FormatList:
		return fmt.Sprintf("[%d] (line %d)", *r.Index, r.Line)
	case r.Index != nil && f == FormatEnvelope:
		return fmt.Sprintf("views[%d] (line %d)", *r.Index, r.Line)
	case f == FormatLines && r.Line > 0:
		return fmt.Sprintf("line %d", r.Line)
	}
	return ""
}
