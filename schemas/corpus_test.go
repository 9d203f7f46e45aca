package schemas

import (
	"errors"
	"fmt"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// beyondSchema lists the kernel rules that JSON Schema cannot state: they
// relate two values of a document (duplicate ids, one source_id with two
// SourceRefs, records bounded to the view's proposition), depend on a
// number's spelling (1.0 where an integer is due: JSON Schema's data model
// has no such difference) or on the instant grammar of §3. A refused
// document that the schema lets through must have been refused for one of
// these; any other miss is a gap in the schema.
var beyondSchema = []string{
	"already names a different SourceRef",
	"duplicate ",
	"must be a JSON integer",
	"must be a string or an integer, not a number",
	"must be a parseable ISO 8601 instant",
	"names proposition",
	"must name ",
}

func beyond(err error) bool {
	var we *warrant.Error
	if !errors.As(err, &we) {
		return false
	}
	for _, s := range beyondSchema {
		if strings.Contains(we.Rule, s) {
			return true
		}
	}
	return false
}

// acceptsAllForms checks a document the kernel accepts against every
// schema and every way an ingest input can carry it.
func acceptsAllForms(t *testing.T, name string, raw []byte) {
	t.Helper()
	doc, err := Decode(raw)
	if err != nil {
		t.Errorf("%s: the kernel accepts it but it does not decode: %v", name, err)
		return
	}
	view := doc
	if m, ok := doc.(map[string]any); ok {
		view = withoutKey(m, "evaluated_at")
	}
	checks := []struct {
		schema string
		doc    any
	}{
		{View, view}, {Document, doc}, {Ingest, doc},
		{Ingest, []any{doc, view}}, {Ingest, map[string]any{"views": []any{doc}, "note": 1}},
	}
	for _, c := range checks {
		if err := Validate(c.schema, c.doc); err != nil {
			t.Errorf("%s: the kernel accepts it, the %s schema refuses it: %v", name, c.schema, err)
		}
	}
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// tally counts what the schema does with documents the kernel refuses.
type tally struct {
	refused, caught, unparsed int
}

func (c *tally) refusedDoc(t *testing.T, name string, raw []byte, kerr error) {
	t.Helper()
	c.refused++
	doc, err := Decode(raw)
	if err != nil {
		c.unparsed++ // not JSON; the kernel says so first
		return
	}
	if ValidateDocument(doc) != nil {
		c.caught++
		return
	}
	if !beyond(kerr) {
		t.Errorf("%s: the kernel refuses it (%v) and the schema lets it through, although the rule is one a schema can state", name, kerr)
	}
}

func (c *tally) String() string {
	return fmt.Sprintf("%d refused: the schema catches %d (%.1f%%), %d are not JSON, %d break rules beyond a schema",
		c.refused, c.caught, 100*float64(c.caught)/float64(max(c.refused, 1)), c.unparsed, c.refused-c.caught-c.unparsed)
}

func TestNeverStricterThanKernelPack(t *testing.T) {
	for name, raw := range packFiles(t, "fixtures") {
		if err := kernelRefuses(raw); err != nil {
			t.Fatalf("%s: the kernel refuses a pack fixture: %v", name, err)
		}
		acceptsAllForms(t, "fixtures/"+name, raw)
	}
	var c tally
	for name, raw := range packFiles(t, "invalid") {
		kerr := kernelRefuses(raw)
		if kerr == nil {
			t.Fatalf("invalid/%s: the kernel accepts it", name)
		}
		c.refusedDoc(t, "invalid/"+name, raw, kerr)
	}
	t.Logf("pack invalid/: %s", &c)
}

func TestQuickstartExampleValidates(t *testing.T) {
	raw := readShared(t, "ewp-pack", "quickstart-example.json")
	doc, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateIngest(doc); err != nil {
		t.Fatalf("the quickstart ingest input does not validate: %v", err)
	}
}

// TestNeverStricterThanKernelCorpus is the schema's contract: over the
// whole differential corpus, every document the kernel's decoder accepts
// validates (in every form an ingest input can take), and every document it
// refuses is caught by the schema unless the rule is beyond a schema. The
// catch rate is logged; run with -v to see it.
func TestNeverStricterThanKernelCorpus(t *testing.T) {
	var accepted int
	var c tally
	sharedtest.EachCorpusCase(t, func(_ int, cc sharedtest.CorpusCase) {
		// The decoder's verdict, not the full one: a document whose only
		// fault is its evaluated_at still holds a valid view.
		if _, err := warrant.DecodeDocument(cc.Doc); err == nil {
			accepted++
			acceptsAllForms(t, cc.ID, cc.Doc)
		}
		if kerr := kernelRefuses(cc.Doc); kerr != nil {
			c.refusedDoc(t, cc.ID, cc.Doc, kerr)
		}
	})
	t.Logf("corpus: %d accepted by the kernel's decoder, all valid; %s", accepted, &c)
}

func TestIngestFormsFollowTheSplitter(t *testing.T) {
	view := `{"proposition_id": "P"}`
	cases := []struct {
		input string
		ok    bool
	}{
		{view, true},
		{`[` + view + `, ` + view + `]`, true},
		{`{"views": [` + view + `], "note": "other keys are ignored"}`, true},
		{`{"views": null}`, false},                                 // the splitter wants a list
		{`{"views": [{"proposition_id": 1}]}`, false},              // items are documents
		{`{"graph": {}, "primitives": []}`, true},                  // the grounding loader's business
		{`{"proposition_id": "P", "policy_version": "v9"}`, false}, // unknown policy
		{`"P"`, false},
	}
	for _, c := range cases {
		doc, err := Decode([]byte(c.input))
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateIngest(doc); (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok=%v", c.input, err, c.ok)
		}
	}
}
