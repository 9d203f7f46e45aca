package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// Class names what happened to one case. The first four failure classes
// and EXPECTED_DIVERGENCE are the reference's; REFUSAL_MISMATCH, CRASH
// and TIMEOUT are this runner's. PROTOCOL.md defines each.
type Class string

const (
	Pass               Class = "PASS"
	IngestLoss         Class = "INGEST_LOSS"
	RetrievalLoss      Class = "RETRIEVAL_LOSS"
	AdapterMapLoss     Class = "ADAPTER_MAP_LOSS"
	WarrantMismatch    Class = "WARRANT_MISMATCH"
	RefusalMismatch    Class = "REFUSAL_MISMATCH"
	Crash              Class = "CRASH"
	Timeout            Class = "TIMEOUT"
	ExpectedDivergence Class = "EXPECTED_DIVERGENCE"
	// Skipped is a case the target's transport cannot carry (a document
	// that is not JSON, over MCP). It is neither passed nor failed.
	Skipped Class = "SKIPPED"
)

// stageOrder is the order a case's failures are classed in: the first
// stage that lost something names the case.
var stageOrder = []Class{Crash, Timeout, RefusalMismatch, IngestLoss, RetrievalLoss, AdapterMapLoss, WarrantMismatch}

// Finding is one thing a case got wrong (or, as an observation, one
// allowed difference): the field path and both values as JSON text, or a
// detail when there is no field to point at.
type Finding struct {
	Class    Class  `json:"class"`
	Path     string `json:"path,omitempty"`
	Expected string `json:"expected,omitempty"`
	Got      string `json:"got,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// Result is the outcome of one case.
type Result struct {
	Section      string    `json:"section"`
	Case         string    `json:"case"`
	Class        Class     `json:"class"`
	Findings     []Finding `json:"findings,omitempty"`
	Observations []Finding `json:"observations,omitempty"`
	Seconds      float64   `json:"seconds"`
}

// Failed reports whether the case counts against conformance.
func (r *Result) Failed() bool { return r.Class != Pass && r.Class != Skipped }

// nonNormative are the WarrantView fields the protocol reports but does
// not fix: a difference there is EXPECTED_DIVERGENCE, never a failure.
var nonNormative = map[string]bool{"warrant.strength": true, "warrant.rationale_codes": true}

// Runner judges cases against a target.
type Runner struct {
	Target Target
	// Timeout bounds each call to the target (default DefaultTimeout).
	Timeout time.Duration
	// stored remembers the propositions stored in the target's current
	// store during this run, to tell a collision between two cases of the
	// pack from a store that refuses what it should keep.
	stored map[string]bool
}

// DefaultTimeout is the per-case timeout when none is given.
const DefaultTimeout = 10 * time.Second

// Judge runs one case.
func (r *Runner) Judge(ctx context.Context, c Case) Result {
	start := time.Now()
	res := Result{Section: c.Section, Case: c.Name}
	r.judge(ctx, c, &res)
	res.Class = classOf(res.Findings)
	if len(res.Findings) == 1 && res.Findings[0].Class == Skipped {
		res.Class = Skipped
	}
	res.Seconds = time.Since(start).Seconds()
	return res
}

func classOf(fs []Finding) Class {
	for _, cl := range stageOrder {
		for _, f := range fs {
			if f.Class == cl {
				return cl
			}
		}
	}
	return Pass
}

func (r *Runner) call(ctx context.Context, f func(context.Context) (Answer, error)) (Answer, *Finding) {
	d := r.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	a, err := f(cctx)
	if err == nil {
		return a, nil
	}
	if b, ok := err.(*Broken); ok {
		return a, &Finding{Class: b.Class, Detail: b.Detail}
	}
	return a, &Finding{Class: Crash, Detail: err.Error()}
}

func (r *Runner) judge(ctx context.Context, c Case, res *Result) {
	if c.Grounding != nil {
		r.judgeGrounding(ctx, c, res)
		return
	}
	a, broke := r.call(ctx, func(ctx context.Context) (Answer, error) { return r.Target.Evaluate(ctx, c.Doc) })
	if broke != nil {
		res.Findings = append(res.Findings, *broke)
		return
	}
	switch {
	case c.MustRefuse && a.Refusal == nil:
		res.Findings = append(res.Findings, Finding{Class: RefusalMismatch, Path: "refused",
			Expected: "true", Got: "false", Detail: "the document is invalid and must be refused; the target evaluated it"})
	case c.MustRefuse:
		r.judgeInvalidWrite(ctx, c, res)
	case a.Refusal != nil:
		res.Findings = append(res.Findings, Finding{Class: RefusalMismatch, Path: "refused", Expected: "false", Got: "true",
			Detail: "the protocol evaluates this document; the target refused it: " + a.Refusal.Code + ": " + a.Refusal.Error})
	default:
		compareAnswer(c, a.View, res)
		r.judgeStore(ctx, c, a.View, res)
	}
}

// compareAnswer compares a WarrantView with every expectation the case
// carries.
func compareAnswer(c Case, got map[string]any, res *Result) {
	axes, _ := got["warrant"].(map[string]any)
	for _, k := range axisFields {
		if want, ok := c.Axes[k]; ok {
			if g := field(axes, k); !equalJSON(want, g) {
				res.Findings = append(res.Findings, mismatch(WarrantMismatch, "warrant."+k, want, g))
			}
		}
	}
	for _, k := range sortedKeys(c.Fields) {
		if g := field(got, k); !equalJSON(c.Fields[k], g) {
			res.Findings = append(res.Findings, mismatch(WarrantMismatch, k, c.Fields[k], g))
		}
	}
	if c.ViewID != nil && !equalJSON(*c.ViewID, field(got, "view_id")) {
		res.Findings = append(res.Findings, mismatch(WarrantMismatch, "view_id", *c.ViewID, field(got, "view_id")))
	}
	if c.Lineage != nil && !equalJSON(*c.Lineage, field(got, "independent_lineage_count")) {
		res.Findings = append(res.Findings, mismatch(WarrantMismatch, "independent_lineage_count", *c.Lineage, field(got, "independent_lineage_count")))
	}
	if c.View != nil {
		compareView(c.View, got, WarrantMismatch, res)
	}
}

// compareView compares got with a whole expected WarrantView on every
// field the expectation has (extra fields of the answer, such as an MCP
// server's inline_origins_demoted, are the target's own). Normative
// differences are findings of class cl; the rest observations.
func compareView(want, got map[string]any, cl Class, res *Result) {
	diffJSON("", want, got, func(path string, w, g any) {
		if _, extra := w.(absent); extra {
			return
		}
		if nonNormative[path] {
			res.Observations = append(res.Observations, mismatch(ExpectedDivergence, path, w, g))
			return
		}
		res.Findings = append(res.Findings, mismatch(cl, path, w, g))
	})
}

func mismatch(cl Class, path string, want, got any) Finding {
	return Finding{Class: cl, Path: path, Expected: show(want), Got: show(got)}
}

// diffJSON calls emit for every leaf where want and got differ: objects
// member by member, arrays of equal length element by element, anything
// else whole. A member one side lacks is absent{}.
func diffJSON(path string, want, got any, emit func(path string, want, got any)) {
	switch w := want.(type) {
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			keys := sortedKeys(w)
			for k := range g {
				if _, ok := w[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				diffJSON(joinPath(path, k), field(w, k), field(g, k), emit)
			}
			return
		}
	case []any:
		if g, ok := got.([]any); ok && len(g) == len(w) {
			for i := range w {
				diffJSON(path+"["+strconv.Itoa(i)+"]", w[i], g[i], emit)
			}
			return
		}
	}
	if !equalJSON(want, got) {
		emit(path, want, got)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// storable is the target as a store and the case's view, when the target
// has write tools and the case holds a view to put through them.
func (r *Runner) storable(c Case) (Store, json.RawMessage, bool) {
	st, ok := r.Target.(Store)
	if !ok || !st.Stores() {
		return nil, nil, false
	}
	view, ok := viewOf(c.Doc)
	return st, view, ok
}

// judgeInvalidWrite checks that a target with write tools refuses to
// store an invalid view, as its evaluator refused to evaluate it.
func (r *Runner) judgeInvalidWrite(ctx context.Context, c Case, res *Result) {
	st, view, ok := r.storable(c)
	if !ok {
		return
	}
	if _, err := warrant.DecodeView(view); err == nil {
		return // the document is invalid for its evaluated_at or policy, not its view
	}
	var put Stored
	_, broke := r.call(ctx, func(ctx context.Context) (Answer, error) {
		var err error
		put, err = st.Put(ctx, view)
		return Answer{}, err
	})
	switch {
	case broke != nil:
		res.Findings = append(res.Findings, *broke)
	case put.Refusal == nil:
		res.Findings = append(res.Findings, Finding{Class: IngestLoss, Path: "stored", Expected: "refused", Got: show(put.ViewID),
			Detail: "the write tool stored a view the protocol refuses (and the target's own evaluator refused)"})
	}
}

// judgeStore puts the case's view through the target's write tool, reads
// it back and evaluates the stored snapshot: ingest, retrieval and the
// store's mapping into the evaluator are each judged against the inline
// answer.
func (r *Runner) judgeStore(ctx context.Context, c Case, inline map[string]any, res *Result) {
	st, view, ok := r.storable(c)
	if !ok {
		return
	}
	put, ok := r.put(ctx, st, view, res)
	if !ok {
		return
	}
	acks := map[string]string{"proposition_id": put.PropositionID, "view_id": put.ViewID}
	for _, k := range []string{"proposition_id", "view_id"} {
		if ack := acks[k]; !equalJSON(field(inline, k), ack) {
			res.Findings = append(res.Findings, Finding{Class: IngestLoss, Path: k, Expected: show(field(inline, k)), Got: show(ack),
				Detail: "the write tool acknowledged the view under another id than its evaluator gives it"})
			return
		}
	}
	got, broke := r.call(ctx, func(ctx context.Context) (Answer, error) { return st.Get(ctx, put.PropositionID, put.ViewID) })
	switch {
	case broke != nil:
		res.Findings = append(res.Findings, *broke)
		return
	case got.Refusal != nil:
		res.Findings = append(res.Findings, Finding{Class: RetrievalLoss, Detail: "the read tool refused the snapshot just stored: " + got.Refusal.Code + ": " + got.Refusal.Error})
		return
	}
	compareRetrieved(view, got, res)
	evaluatedAt, _ := inline["evaluated_at"].(string)
	stored, broke := r.call(ctx, func(ctx context.Context) (Answer, error) {
		return st.EvaluateStored(ctx, put.PropositionID, put.ViewID, evaluatedAt)
	})
	switch {
	case broke != nil:
		res.Findings = append(res.Findings, *broke)
	case stored.Refusal != nil:
		res.Findings = append(res.Findings, Finding{Class: AdapterMapLoss, Detail: "warrant_now refused the stored snapshot it evaluates inline: " + stored.Refusal.Code + ": " + stored.Refusal.Error})
	default:
		compareStored(inline, stored.View, res)
	}
}

// put stores view, once more on a fresh store when it collides with a
// view an earlier case stored under the same proposition.
func (r *Runner) put(ctx context.Context, st Store, view json.RawMessage, res *Result) (Stored, bool) {
	pid := propositionOf(view)
	for attempt := 0; ; attempt++ {
		var put Stored
		_, broke := r.call(ctx, func(ctx context.Context) (Answer, error) {
			var err error
			put, err = st.Put(ctx, view)
			return Answer{}, err
		})
		if broke != nil {
			res.Findings = append(res.Findings, *broke)
			return put, false
		}
		if put.Refusal == nil {
			r.remember(pid)
			return put, true
		}
		if put.Refusal.Code == "EWP_REFUSE_INGEST_ROLE" {
			res.Observations = append(res.Observations, Finding{Class: Skipped, Detail: "stored stages not judged: the target refuses this caller the ingest role; " +
				"give the runner the ingest role (stdio: the server's write flag; HTTP: EWP_INGEST_TOKEN)"})
			return put, false
		}
		collides := put.Refusal.Code == "EWP_REFUSE_IMMUTABLE_RECORD" && r.stored[pid]
		if collides && attempt == 0 {
			if f, ok := st.(freshener); ok && f.Fresh() {
				r.stored = nil
				continue
			}
			res.Observations = append(res.Observations, Finding{Class: Skipped, Detail: "stored stages not judged: an earlier case stored other records under proposition " +
				strconv.Quote(pid) + " in the same store (" + put.Refusal.Code + "); give the command a {tmp} placeholder for a fresh store"})
			return put, false
		}
		res.Findings = append(res.Findings, Finding{Class: IngestLoss, Path: "stored", Expected: "stored", Got: "refused",
			Detail: "the write tool refused a view the protocol accepts: " + put.Refusal.Code + ": " + put.Refusal.Error})
		return put, false
	}
}

func (r *Runner) remember(pid string) {
	if r.stored == nil {
		r.stored = map[string]bool{}
	}
	r.stored[pid] = true
}

// freshener is a target that can start over on an empty store.
type freshener interface{ Fresh() bool }

// compareRetrieved compares the view read back with the view written.
// Both are read by this project's decoder and printed in the stored form
// (defaults filled, records in id order), so only content counts; a view
// the decoder refuses is compared as written, member by member, so the
// dropped or changed field is named either way.
func compareRetrieved(put json.RawMessage, got Answer, res *Result) {
	gotText := got.Raw
	if gotText == nil {
		gotText, _ = json.Marshal(got.View)
	}
	want, wok := storedForm(put)
	have, hok := storedForm(gotText)
	if !wok || !hok {
		var w map[string]any
		_ = json.Unmarshal(put, &w)
		want, have = w, got.View
	}
	diffJSON("view", want, have, func(path string, w, g any) {
		if _, extra := w.(absent); extra && !hok {
			return // a default the store filled in
		}
		res.Findings = append(res.Findings, mismatch(RetrievalLoss, path, w, g))
	})
}

func storedForm(view []byte) (any, bool) {
	v, err := warrant.DecodeView(view)
	if err != nil {
		return nil, false
	}
	var m any
	if err := json.Unmarshal(warrant.Encode(v), &m); err != nil {
		return nil, false
	}
	return m, true
}

// compareStored compares the WarrantView of the stored snapshot with the
// inline one on every field of the inline answer but its inline-only
// extensions.
func compareStored(inline, stored map[string]any, res *Result) {
	want := make(map[string]any, len(inline))
	for k, v := range inline {
		if k != "inline_origins_demoted" {
			want[k] = v
		}
	}
	compareView(want, stored, AdapterMapLoss, res)
}

// viewOf takes the EvidenceView out of a fixture-format document: the
// document without evaluated_at and the policy identity. Members keep
// their exact JSON text. A document that is not a JSON object has no
// view to store.
func viewOf(doc []byte) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil || m == nil {
		return nil, false
	}
	for _, k := range docOnlyKeys {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

var docOnlyKeys = []string{"evaluated_at", "policy_id", "policy_version"}

func propositionOf(view []byte) string {
	var m map[string]any
	_ = json.Unmarshal(view, &m)
	return fmt.Sprint(m["proposition_id"])
}
