package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/ewp-go/ewp/conformance/corpus"
)

// CorpusCase is one line of a differential corpus: a fixture-format
// document (kept as its exact JSON text) and the reference's verdict.
type CorpusCase = corpus.Case

// Parity counts agreement with the reference over a corpus.
type Parity struct {
	Total int `json:"total"`
	// Verdict counts cases that agree on refusal-vs-evaluation and, when
	// evaluated, on all five axes. This is the normative score.
	Verdict int `json:"verdict"`
	// ViewID and Lineage count agreement on evaluated cases that carry them.
	ViewID, ViewIDTotal   int
	Lineage, LineageTotal int
	// View counts evaluated cases whose whole WarrantView (axes,
	// diagnostics, every field) equals the reference's, over the ViewTotal
	// cases that carry one.
	View, ViewTotal int
	// FieldDiffs counts, per field path ("warrant.strength",
	// "superseded_by"), the cases in which that field differs.
	FieldDiffs map[string]int `json:"field_diffs"`
	// Diffs are the differing fields, in corpus order.
	Diffs      []FieldDiff `json:"diffs"`
	Mismatches []string    `json:"mismatches"`
}

// FieldDiff is one field of one case's WarrantView that differs from the
// reference's.
type FieldDiff struct {
	Case      string `json:"case"`
	Path      string `json:"path"`
	Reference string `json:"reference"`
	Ours      string `json:"ours"`
}

// LoadCorpus reads a corpus file, gzip-compressed when it ends in .gz.
func LoadCorpus(path string) ([]CorpusCase, error) {
	var cases []CorpusCase
	err := corpus.Each(path, func(_ int, c CorpusCase) error {
		cases = append(cases, c)
		return nil
	})
	return cases, err
}

// CheckCorpus sends every case through Eval, exactly as an external
// harness would through `ewp-conformance eval`, and compares verdicts.
func CheckCorpus(cases []CorpusCase) (*Parity, error) {
	var in bytes.Buffer
	for _, c := range cases {
		in.Write(bytes.ReplaceAll(c.Doc, []byte("\n"), []byte(" ")))
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	if err := Eval(&in, &out); err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(cases) {
		return nil, fmt.Errorf("eval wrote %d lines for %d documents", len(lines), len(cases))
	}
	p := &Parity{Total: len(cases), FieldDiffs: map[string]int{}}
	for i, c := range cases {
		p.compare(c, lines[i])
	}
	return p, nil
}

type answer struct {
	Refused bool              `json:"refused"`
	ViewID  string            `json:"view_id"`
	Warrant map[string]any    `json:"warrant"`
	Lineage int               `json:"independent_lineage_count"`
	Code    string            `json:"code"`
	Error   string            `json:"error"`
	Extra   map[string]string `json:"-"`
}

func (p *Parity) compare(c CorpusCase, line []byte) {
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		p.miss(c, "unreadable answer: "+err.Error())
		return
	}
	switch {
	case c.Expect.Refused && a.Refused:
		p.Verdict++
	case c.Expect.Refused:
		p.miss(c, "reference refuses; we evaluated")
	case a.Refused:
		p.miss(c, "reference evaluates; we refused: "+a.Code+": "+a.Error)
	default:
		p.compareAxes(c, a)
		p.compareView(c, line)
	}
}

func (p *Parity) compareAxes(c CorpusCase, a answer) {
	ok := true
	for _, k := range axisFields {
		if got, _ := a.Warrant[k].(string); got != c.Expect.Axes[k] {
			ok = false
			p.miss(c, fmt.Sprintf("%s: reference %s, ours %s", k, c.Expect.Axes[k], got))
		}
	}
	if ok {
		p.Verdict++
	}
	if c.Expect.ViewID != nil {
		p.ViewIDTotal++
		if *c.Expect.ViewID == a.ViewID {
			p.ViewID++
		} else {
			p.miss(c, fmt.Sprintf("view_id: reference %q, ours %q", *c.Expect.ViewID, a.ViewID))
		}
	}
	if c.Expect.LineageCount != nil {
		p.LineageTotal++
		if *c.Expect.LineageCount == a.Lineage {
			p.Lineage++
		} else {
			p.miss(c, fmt.Sprintf("lineage count: reference %d, ours %d", *c.Expect.LineageCount, a.Lineage))
		}
	}
}

func (p *Parity) miss(c CorpusCase, why string) {
	p.Mismatches = append(p.Mismatches, c.ID+" ("+c.Note+"): "+why)
}

// compareView compares the whole WarrantView, field by field, when the
// case carries the reference's.
func (p *Parity) compareView(c CorpusCase, line []byte) {
	if len(c.Expect.WarrantView) == 0 || string(c.Expect.WarrantView) == "null" {
		return
	}
	p.ViewTotal++
	var want, got any
	if err := json.Unmarshal(c.Expect.WarrantView, &want); err != nil {
		p.miss(c, "unreadable reference warrant_view: "+err.Error())
		return
	}
	if err := json.Unmarshal(line, &got); err != nil {
		return // already reported by compare
	}
	before := len(p.Diffs)
	p.diffValue(c.ID, "", want, got)
	if len(p.Diffs) == before {
		p.View++
	}
}

// diffValue records every field under path where want and got differ:
// objects field by field, anything else (numbers, strings, lists) whole,
// so a list that differs is one difference at its own path.
func (p *Parity) diffValue(id, path string, want, got any) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := make([]string, 0, len(wm)+len(gm))
		for k := range wm {
			keys = append(keys, k)
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p.diffValue(id, joinPath(path, k), field(wm, k), field(gm, k))
		}
		return
	}
	if w, g := show(want), show(got); w != g {
		p.FieldDiffs[path]++
		p.Diffs = append(p.Diffs, FieldDiff{Case: id, Path: path, Reference: w, Ours: g})
	}
}

// absent marks a field one side lacks, so that it differs from null.
type absent struct{}

func (absent) MarshalJSON() ([]byte, error) { return []byte(`"<absent>"`), nil }

func field(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return absent{}
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Agrees reports full agreement on verdicts, view ids, lineage counts and
// every field of every WarrantView.
func (p *Parity) Agrees() bool {
	return p.Verdict == p.Total && p.ViewID == p.ViewIDTotal && p.Lineage == p.LineageTotal &&
		p.View == p.ViewTotal && len(p.Mismatches) == 0
}

// examplesPerField is how many differing cases WriteText shows per field.
const examplesPerField = 3

// WriteText prints the parity lines, the count of differing cases per
// field with the first few of each, and every other mismatch.
func (p *Parity) WriteText(w io.Writer) {
	fmt.Fprintf(w, "parity %d/%d (refusal-vs-evaluation and all five axes)\n", p.Verdict, p.Total)
	fmt.Fprintf(w, "view_id %d/%d\n", p.ViewID, p.ViewIDTotal)
	fmt.Fprintf(w, "lineage count %d/%d\n", p.Lineage, p.LineageTotal)
	fmt.Fprintf(w, "whole WarrantView %d/%d (every field)\n", p.View, p.ViewTotal)
	paths := make([]string, 0, len(p.FieldDiffs))
	for k := range p.FieldDiffs {
		paths = append(paths, k)
	}
	slices.Sort(paths)
	for _, path := range paths {
		fmt.Fprintf(w, "  field %s differs in %d cases\n", path, p.FieldDiffs[path])
		shown := 0
		for _, d := range p.Diffs {
			if d.Path == path && shown < examplesPerField {
				fmt.Fprintf(w, "    %s: reference %s, ours %s\n", d.Case, d.Reference, d.Ours)
				shown++
			}
		}
	}
	for _, m := range p.Mismatches {
		fmt.Fprintln(w, "  MISMATCH", m)
	}
}
