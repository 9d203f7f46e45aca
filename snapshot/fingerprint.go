package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"slices"
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// Kind names what a fingerprint identifies. The values are stable: stores
// persist them.
type Kind string

// Kinds of identified things within one proposition.
const (
	KindAssertion Kind = "assertion"
	KindEvidence  Kind = "evidence"
	KindCheck     Kind = "check"
	KindSource    Kind = "source"
	KindConflict  Kind = "conflict-participants"
)

// Key names one identified thing within a proposition.
type Key struct {
	Kind Kind
	ID   string
}

// Sum is the sha256 of a record's identity content.
type Sum [32]byte

// Hex is the lowercase hex form, for stores that keep text.
func (s Sum) Hex() string { return hex.EncodeToString(s[:]) }

// ParseSum reads the Hex form back.
func ParseSum(h string) (Sum, bool) {
	var s Sum
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(s) {
		return s, false
	}
	copy(s[:], b)
	return s, true
}

// Fingerprint is the identity of one record in one view. Field is the JSON
// path of its first occurrence in that view, for error messages.
type Fingerprint struct {
	Key
	Sum   Sum
	Field string
}

// Fingerprints returns one fingerprint per identified thing in v, in a
// deterministic order (records in view order, then sources by first use).
// A source_id used by several records appears once: the kernel has already
// refused a view that gives one source_id two different SourceRefs.
func Fingerprints(v *warrant.View) []Fingerprint {
	n := len(v.Assertions) + len(v.Evidence) + len(v.Checks)
	fps := make([]Fingerprint, 0, 2*n+len(v.Conflicts))
	var sources []Fingerprint
	seen := make(map[string]bool, n)
	s := newSummer()
	addSource := func(src *warrant.SourceRef, field string) {
		if seen[src.SourceID] {
			return
		}
		seen[src.SourceID] = true
		sources = append(sources, Fingerprint{Key{KindSource, src.SourceID}, s.sourceSum(src), field + ".source"})
	}
	for i := range v.Assertions {
		a := &v.Assertions[i]
		f := "assertions[" + strconv.Itoa(i) + "]"
		fps = append(fps, Fingerprint{Key{KindAssertion, a.AssertionID}, s.assertionSum(a), f})
		addSource(&a.Source, f)
	}
	for i := range v.Evidence {
		e := &v.Evidence[i]
		f := "evidence[" + strconv.Itoa(i) + "]"
		fps = append(fps, Fingerprint{Key{KindEvidence, e.EvidenceID}, s.evidenceSum(e), f})
		addSource(&e.Source, f)
	}
	for i := range v.Checks {
		c := &v.Checks[i]
		f := "checks[" + strconv.Itoa(i) + "]"
		fps = append(fps, Fingerprint{Key{KindCheck, c.CheckID}, s.checkSum(c), f})
		addSource(&c.Source, f)
	}
	for i := range v.Conflicts {
		c := &v.Conflicts[i]
		f := "conflicts[" + strconv.Itoa(i) + "]"
		fps = append(fps, Fingerprint{Key{KindConflict, c.ConflictID}, s.participantsSum(c), f + ".proposition_ids"})
	}
	return append(fps, sources...)
}

// summer writes fields unambiguously: every value is tagged and
// length-prefixed, so no two different field sequences hash alike. One
// summer serves a whole view (begin resets it), which keeps a large load
// from allocating a hash per record.
type summer struct {
	h   hash.Hash
	buf []byte
}

func newSummer() *summer {
	return &summer{h: sha256.New(), buf: make([]byte, 0, 512)}
}

func (s *summer) begin(tag Kind) {
	s.h.Reset()
	s.buf = s.buf[:0]
	s.str(string(tag))
}

func (s *summer) str(v string) {
	s.buf = binary.AppendUvarint(s.buf, uint64(len(v)))
	s.buf = append(s.buf, v...)
	if len(s.buf) > 4096 {
		s.h.Write(s.buf)
		s.buf = s.buf[:0]
	}
}

// opt distinguishes nil (JSON null) from an empty string.
func (s *summer) opt(v *string) {
	if v == nil {
		s.buf = append(s.buf, 0)
		return
	}
	s.buf = append(s.buf, 1)
	s.str(*v)
}

func (s *summer) list(vs []string) {
	s.buf = binary.AppendUvarint(s.buf, uint64(len(vs)))
	for _, v := range vs {
		s.str(v)
	}
}

// number hashes the float's bits: the kernel reads confidence with
// float(), so 1 and 1.0 are the same confidence and the same record.
func (s *summer) number(f float64) {
	s.buf = binary.BigEndian.AppendUint64(s.buf, math.Float64bits(f))
}

func (s *summer) source(r *warrant.SourceRef) {
	s.str(r.SourceID)
	s.str(r.LineageID)
	s.str(r.OriginType)
	s.str(r.OriginLocator)
	s.str(r.SnapshotID)
	s.str(r.ContentHash)
	s.str(r.ObservedAt)
	s.opt(r.ExtractorID)
	s.opt(r.ParentSourceID)
}

func (s *summer) sum() Sum {
	s.h.Write(s.buf)
	var out Sum
	s.h.Sum(out[:0])
	return out
}

func (s *summer) sourceSum(r *warrant.SourceRef) Sum {
	s.begin(KindSource)
	s.source(r)
	return s.sum()
}

func (s *summer) assertionSum(a *warrant.Assertion) Sum {
	s.begin(KindAssertion)
	s.str(a.AssertionID)
	s.str(a.Text)
	s.str(a.AssertedBy)
	s.number(a.Confidence)
	s.source(&a.Source)
	s.str(a.AssertedAt)
	s.str(a.PropositionID)
	return s.sum()
}

func (s *summer) evidenceSum(e *warrant.Evidence) Sum {
	s.begin(KindEvidence)
	s.str(e.EvidenceID)
	s.str(e.Polarity)
	s.source(&e.Source)
	s.str(e.Content)
	s.str(e.ObservedAt)
	s.str(e.PropositionID)
	return s.sum()
}

// checkSum sorts the check's subjects because the canonical form does:
// the same check with its subjects reordered is the same check.
func (s *summer) checkSum(c *warrant.Check) Sum {
	s.begin(KindCheck)
	s.str(c.CheckID)
	s.str(c.Method)
	s.str(c.Scope)
	s.source(&c.Source)
	s.str(c.ObservedAt)
	s.str(c.Result)
	s.list(sorted(c.Subjects))
	return s.sum()
}

func (s *summer) participantsSum(c *warrant.Conflict) Sum {
	s.begin(KindConflict)
	s.str(c.ConflictID)
	s.list(sorted(c.PropositionIDs))
	return s.sum()
}

func sorted(vs []string) []string {
	if slices.IsSorted(vs) {
		return vs
	}
	out := slices.Clone(vs)
	slices.Sort(out)
	return out
}
