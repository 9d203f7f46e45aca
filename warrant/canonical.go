package warrant

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

// Canonical returns the canonical JSON of §8: every schema field with its
// default filled, records sorted by id, lineage by (from, to, kind), string
// lists sorted, no adapter_meta and no view_id, printed as Python's
// json.dumps(sort_keys=True). It is the input of the derived view id.
func Canonical(v *View) []byte {
	w := pyjson.Writer{Buf: make([]byte, 0, sizeHint(v))}
	writeView(&w, v, false)
	return w.Buf
}

// Encode returns the stored form of v: the canonical JSON plus adapter_meta
// and view_id. DecodeView(Encode(v)) gives back v (ViewIDDerived false).
func Encode(v *View) []byte {
	w := pyjson.Writer{Buf: make([]byte, 0, sizeHint(v)+len(v.AdapterMeta)+len(v.ViewID))}
	writeView(&w, v, true)
	return w.Buf
}

// DerivedViewID is "v-" + the first 20 hex digits of sha256(Canonical(v)).
func DerivedViewID(v *View) string {
	sum := sha256.Sum256(Canonical(v))
	return "v-" + hex.EncodeToString(sum[:10])
}

// sizeHint guesses the canonical size so the writer rarely regrows: a
// record with its SourceRef prints in roughly 400 bytes.
func sizeHint(v *View) int {
	return 512 + 400*(len(v.Assertions)+len(v.Evidence)+len(v.Checks)) + 100*(len(v.Conflicts)+len(v.Lineage))
}

func writeView(w *pyjson.Writer, v *View, stored bool) {
	w.Raw("{")
	first := true
	if stored {
		w.Key("adapter_meta", true)
		w.Raw(v.AdapterMeta)
		first = false
	}
	w.Key("assertions", first)
	writeSorted(w, v.Assertions, func(a Assertion) string { return a.AssertionID }, writeAssertion)
	w.Key("checks", false)
	writeSorted(w, v.Checks, func(c Check) string { return c.CheckID }, writeCheck)
	w.Key("conflicts", false)
	writeSorted(w, v.Conflicts, func(c Conflict) string { return c.ConflictID }, writeConflict)
	w.Key("degraded", false)
	w.Bool(v.Degraded)
	w.Key("evidence", false)
	writeSorted(w, v.Evidence, func(e Evidence) string { return e.EvidenceID }, writeEvidence)
	w.Key("freshness_policy_seconds", false)
	w.Raw(itoa(v.Freshness))
	w.Key("lineage", false)
	writeLineage(w, v.Lineage)
	w.Key("omitted_sources", false)
	w.StringList(sortedStrings(v.OmittedSources))
	w.Key("proposition_id", false)
	w.String(v.PropositionID)
	w.Key("retrieval_scope", false)
	w.String(v.RetrievalScope)
	w.Key("subjects", false)
	w.StringList(sortedStrings(v.Subjects))
	if stored {
		w.Key("view_id", false)
		w.String(v.ViewID)
	}
	w.Raw("}")
}

func writeSorted[T any](w *pyjson.Writer, recs []T, id func(T) string, write func(*pyjson.Writer, *T)) {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(id(recs[a]), id(recs[b])) })
	w.Raw("[")
	for n, i := range order {
		if n > 0 {
			w.Raw(", ")
		}
		write(w, &recs[i])
	}
	w.Raw("]")
}

func sortedStrings(list []string) []string {
	if slices.IsSorted(list) {
		return list
	}
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

func writeAssertion(w *pyjson.Writer, a *Assertion) {
	w.Raw("{")
	w.Key("asserted_at", true)
	w.String(a.AssertedAt)
	w.Key("asserted_by", false)
	w.String(a.AssertedBy)
	w.Key("assertion_confidence", false)
	w.Raw(pyjson.FloatRepr(a.Confidence))
	w.Key("assertion_id", false)
	w.String(a.AssertionID)
	w.Key("proposition_id", false)
	w.String(a.PropositionID)
	w.Key("source", false)
	writeSource(w, &a.Source)
	w.Key("text", false)
	w.String(a.Text)
	w.Raw("}")
}

func writeCheck(w *pyjson.Writer, c *Check) {
	w.Raw("{")
	w.Key("check_id", true)
	w.String(c.CheckID)
	w.Key("method", false)
	w.String(c.Method)
	w.Key("observed_at", false)
	w.String(c.ObservedAt)
	w.Key("result", false)
	w.String(c.Result)
	w.Key("scope", false)
	w.String(c.Scope)
	w.Key("source", false)
	writeSource(w, &c.Source)
	w.Key("subjects", false)
	w.StringList(sortedStrings(c.Subjects))
	w.Raw("}")
}

func writeConflict(w *pyjson.Writer, c *Conflict) {
	w.Raw("{")
	w.Key("conflict_id", true)
	w.String(c.ConflictID)
	w.Key("note", false)
	w.String(c.Note)
	w.Key("proposition_ids", false)
	w.StringList(sortedStrings(c.PropositionIDs))
	w.Key("status", false)
	w.String(c.Status)
	w.Raw("}")
}

func writeEvidence(w *pyjson.Writer, e *Evidence) {
	w.Raw("{")
	w.Key("content", true)
	w.String(e.Content)
	w.Key("evidence_id", false)
	w.String(e.EvidenceID)
	w.Key("observed_at", false)
	w.String(e.ObservedAt)
	w.Key("polarity", false)
	w.String(e.Polarity)
	w.Key("proposition_id", false)
	w.String(e.PropositionID)
	w.Key("source", false)
	writeSource(w, &e.Source)
	w.Raw("}")
}

func writeSource(w *pyjson.Writer, s *SourceRef) {
	w.Raw("{")
	w.Key("content_hash", true)
	w.String(s.ContentHash)
	w.Key("extractor_id", false)
	writeOptString(w, s.ExtractorID)
	w.Key("lineage_id", false)
	w.String(s.LineageID)
	w.Key("observed_at", false)
	w.String(s.ObservedAt)
	w.Key("origin_locator", false)
	w.String(s.OriginLocator)
	w.Key("origin_type", false)
	w.String(s.OriginType)
	w.Key("parent_source_id", false)
	writeOptString(w, s.ParentSourceID)
	w.Key("snapshot_id", false)
	w.String(s.SnapshotID)
	w.Key("source_id", false)
	w.String(s.SourceID)
	w.Raw("}")
}

func writeOptString(w *pyjson.Writer, s *string) {
	if s == nil {
		w.Raw("null")
		return
	}
	w.String(*s)
}

func writeLineage(w *pyjson.Writer, edges []LineageEdge) {
	sorted := slices.Clone(edges)
	slices.SortStableFunc(sorted, func(a, b LineageEdge) int {
		if c := strings.Compare(a.FromID, b.FromID); c != 0 {
			return c
		}
		if c := strings.Compare(a.ToID, b.ToID); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	w.Raw("[")
	for i, e := range sorted {
		if i > 0 {
			w.Raw(", ")
		}
		w.Raw("{")
		w.Key("from_id", true)
		w.String(e.FromID)
		w.Key("kind", false)
		w.String(e.Kind)
		w.Key("to_id", false)
		w.String(e.ToID)
		w.Raw("}")
	}
	w.Raw("]")
}

// writeValue prints a decoded JSON value with keys sorted (adapter_meta).
func writeValue(w *pyjson.Writer, x pyjson.Value) {
	switch x.Kind() {
	case pyjson.Null:
		w.Raw("null")
	case pyjson.Bool:
		w.Bool(x.Bool())
	case pyjson.Int:
		w.Raw(pyjson.IntText(x.Str()))
	case pyjson.Float:
		w.Raw(floatJSON(x.Float()))
	case pyjson.String:
		w.String(x.Str())
	case pyjson.Array:
		w.Raw("[")
		x.Elems(func(i int, el pyjson.Value) bool {
			if i > 0 {
				w.Raw(", ")
			}
			writeValue(w, el)
			return true
		})
		w.Raw("]")
	case pyjson.Object:
		members := x.Members()
		slices.SortFunc(members, func(a, b pyjson.Member) int { return strings.Compare(a.Key, b.Key) })
		w.Raw("{")
		for i, m := range members {
			w.Key(m.Key, i == 0)
			writeValue(w, m.Val)
		}
		w.Raw("}")
	}
}

// floatJSON prints a float for storage. An overflowed literal (1e400 reads
// as inf) is written back as an overflowing literal so the stored form
// stays JSON and decodes to the same value.
func floatJSON(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "1e999"
	case math.IsInf(f, -1):
		return "-1e999"
	}
	return pyjson.FloatRepr(f)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
