package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

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
	Mismatches            []string `json:"mismatches"`
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
	p := &Parity{Total: len(cases)}
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

// Agrees reports full agreement on verdicts, view ids and lineage counts.
func (p *Parity) Agrees() bool {
	return p.Verdict == p.Total && p.ViewID == p.ViewIDTotal && p.Lineage == p.LineageTotal
}

// WriteText prints the parity lines and every mismatch.
func (p *Parity) WriteText(w io.Writer) {
	fmt.Fprintf(w, "parity %d/%d (refusal-vs-evaluation and all five axes)\n", p.Verdict, p.Total)
	fmt.Fprintf(w, "view_id %d/%d\n", p.ViewID, p.ViewIDTotal)
	fmt.Fprintf(w, "lineage count %d/%d\n", p.Lineage, p.LineageTotal)
	for _, m := range p.Mismatches {
		fmt.Fprintln(w, "  MISMATCH", m)
	}
}
