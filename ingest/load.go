package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// GraphLoader loads a concept-graph document ({"graph": ..., "primitives":
// [...]}) into the ledger and returns a one-line summary. The grounding
// package provides it; ingest only routes the document.
type GraphLoader func(ctx context.Context, l *ledger.Ledger, raw []byte) (string, error)

// Options configure a Loader.
type Options struct {
	// AttestTrustedOrigins is --attest-trusted-origins: the operator vouches
	// for records whose origin_type is trusted (§10).
	AttestTrustedOrigins bool
	// Partial stores the valid views of a file and reports the rest;
	// otherwise a file with any refused view is not written at all.
	Partial bool
	// Graph routes graph documents; nil refuses them with a clear message.
	Graph GraphLoader
	// Progress, when set, is told about long phases. It may be called from
	// several goroutines at once.
	Progress func(file, phase string, done, total int)
}

// Loader loads input files into a ledger.
type Loader struct {
	L   *ledger.Ledger
	Opt Options
}

// FileReport is what happened to one input.
type FileReport struct {
	Name   string `json:"file"`
	Format Format `json:"format,omitempty"`
	Views  int    `json:"views"`
	// Written is false when nothing of the file was stored.
	Written   bool      `json:"written"`
	Stored    int       `json:"stored"`
	Unchanged int       `json:"unchanged"`
	Refused   []Refusal `json:"refused"`
	Graph     string    `json:"graph,omitempty"`
	Outcomes  []Outcome `json:"-"`
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

// LoadFile validates and stores one input. It returns an error only for
// ledger failures; refusals are in the report.
func (ld *Loader) LoadFile(ctx context.Context, name string, data []byte) (FileReport, error) {
	rep := FileReport{Name: name, Refused: []Refusal{}}
	format, items, err := Split(data)
	rep.Format, rep.Views = format, len(items)
	if err != nil {
		rep.Refused = append(rep.Refused, Refusal{File: name, Code: warrant.CodeInvalidView, Rule: "cannot split the input into views: " + err.Error()})
		return rep, nil
	}
	if format == FormatGraph {
		return ld.loadGraph(ctx, rep, items[0])
	}
	f := &fileLoad{ld: ld, rep: rep, format: format, items: items,
		errs: make([]*warrant.Error, len(items)), tried: make([]bool, len(items)), dropped: make([]bool, len(items))}
	return f.load(ctx)
}

// fileLoad is one file on its way into the ledger. Views are decoded by
// the ledger's workers while the write transaction runs (PutEach), so
// validation and storage overlap. Decoded views are not kept: on a large
// load they would be live heap for the garbage collector to scan again and
// again; a --partial retry decodes again instead.
type fileLoad struct {
	ld      *Loader
	rep     FileReport
	format  Format
	items   []Item
	errs    []*warrant.Error // validation refusals, by item
	tried   []bool           // errs[i] is known
	dropped []bool           // refused by the ledger in an earlier --partial attempt
}

func (f *fileLoad) load(ctx context.Context) (FileReport, error) {
	name, n := f.rep.Name, len(f.items)
	ctx = ledger.WithProgress(ctx, func(done, total int) { f.ld.progress(name, "loading", done, total) })
	for {
		res, err := f.ld.L.PutEach(ctx, n, f.view)
		var be *ledger.BatchError
		var we *warrant.Error
		if err == nil {
			f.rep.Written = res.Stored > 0 || res.Unchanged > 0
			f.rep.Stored, f.rep.Unchanged, f.rep.Outcomes = res.Stored, res.Unchanged, res.Views
			f.collectRefusals()
			return f.rep, nil
		}
		if !errors.As(err, &be) || !errors.As(be.Err, &we) {
			return f.rep, err
		}
		if f.errs[be.Index] != nil || !f.ld.Opt.Partial {
			// Nothing is written; report every refusal of the file, not
			// only the one that stopped the batch.
			f.rep.Refused = append(f.rep.Refused, refusal(name, f.format, f.items[be.Index], we))
			f.decodeRest(be.Index)
			f.collectRefusals()
			return f.rep, nil
		}
		f.rep.Refused = append(f.rep.Refused, refusal(name, f.format, f.items[be.Index], we))
		f.dropped[be.Index] = true
	}
}

// view is the PutEach source: a refused item aborts the batch unless the
// load is partial, in which case it is skipped and reported afterwards.
func (f *fileLoad) view(i int) (*warrant.View, error) {
	if f.dropped[i] || (f.tried[i] && f.errs[i] != nil && f.ld.Opt.Partial) {
		return nil, nil
	}
	d := decodeOne(f.items[i].Raw, f.ld.Opt.AttestTrustedOrigins)
	f.errs[i], f.tried[i] = d.err, true
	switch {
	case d.err != nil && f.ld.Opt.Partial:
		return nil, nil
	case d.err != nil:
		return nil, d.err
	}
	return d.view, nil
}

// decodeRest validates the items the aborted batch did not reach, on every
// core, so the report lists all of the file's refusals.
func (f *fileLoad) decodeRest(stopped int) {
	var rest []int
	for i := range f.items {
		if !f.tried[i] {
			rest = append(rest, i)
		}
	}
	sub := make([]Item, len(rest))
	for k, i := range rest {
		sub[k] = f.items[i]
	}
	for k, d := range decodeAll(sub, f.ld.Opt.AttestTrustedOrigins, func(int) {}) {
		f.errs[rest[k]], f.tried[rest[k]] = d.err, true
	}
	f.errs[stopped] = nil // already reported by the caller
}

// collectRefusals adds the items that failed validation, in file order.
func (f *fileLoad) collectRefusals() {
	for i, err := range f.errs {
		if err != nil {
			f.rep.Refused = append(f.rep.Refused, refusal(f.rep.Name, f.format, f.items[i], err))
		}
	}
	sortRefusals(f.rep.Refused)
	explainRefusals(f.rep.Refused, f.items)
}

func (ld *Loader) loadGraph(ctx context.Context, rep FileReport, it Item) (FileReport, error) {
	if ld.Opt.Graph == nil {
		rep.Refused = append(rep.Refused, Refusal{File: rep.Name, Line: it.Line, Code: warrant.CodeInvalidView,
			Rule: `this is a concept-graph document ({"graph": ..., "primitives": [...]}); this build of ewp-ingest has no grounding loader wired in, so it loads EvidenceViews only`})
		return rep, nil
	}
	summary, err := ld.Opt.Graph(ctx, ld.L, it.Raw)
	if err != nil {
		var le *ledger.Error
		if errors.As(err, &le) {
			return rep, err
		}
		rep.Refused = append(rep.Refused, graphRefusal(rep.Name, it.Line, err))
		return rep, nil
	}
	rep.Written, rep.Graph = true, summary
	return rep, nil
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

func (ld *Loader) progress(file, phase string, done, total int) {
	if ld.Opt.Progress != nil {
		ld.Opt.Progress(file, phase, done, total)
	}
}

// refusal locates a refused item the way its format numbers items.
func refusal(file string, f Format, it Item, we *warrant.Error) Refusal {
	r := Refusal{File: file, Line: it.Line, Code: we.Code, Field: we.Field, Rule: we.Rule}
	switch f {
	case FormatLines:
		r.Where = fmt.Sprintf("line %d", it.Line)
	case FormatList:
		r.Where = fmt.Sprintf("[%d] (line %d)", it.Index, it.Line)
	case FormatEnvelope:
		r.Where = fmt.Sprintf("views[%d] (line %d)", it.Index, it.Line)
	}
	if it.Index >= 0 {
		idx := it.Index
		r.Index = &idx
	}
	return r
}
