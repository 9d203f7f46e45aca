package warrant

import (
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

// fastDecoder reads the usual shape of an EvidenceView in one pass over
// its text, straight into a View, with no parse tree in between; building
// and walking a tape cost more than half of decoding.
//
// It takes only what it can decode exactly as the general path does and
// gives up on everything else: bad syntax, a repeated member (Python keeps
// the last, so earlier values must not be judged), a value of a type that
// needs str() normalisation, and anything the general path would refuse.
// Giving up costs one general decode, which then produces the refusal or
// the view, so refusals keep a single implementation. The differential
// tests and FuzzFastPath hold the two paths equal.
type fastDecoder struct {
	sc pyjson.Scanner
	// once marks a decoder used for a single view, whose scratch lists
	// can become the view's own.
	once bool
	// Scratch reused from view to view; Views get exact-size copies.
	as  []Assertion
	ev  []Evidence
	ch  []Check
	co  []Conflict
	li  []LineageEdge
	src sourceSet
	raw []rawSource
	// strs is the block optional strings point into, so a SourceRef's
	// *string fields cost no allocation each.
	strs []string
	meta pyjson.Parser
	// lim are the limits of the view being read; records counts its
	// records so far. Over a limit the fast path gives up and the general
	// decoder writes the refusal.
	lim     Limits
	records int
}

// Members every record or SourceRef must have, as field bits.
const (
	needAssertion = 1<<fAssertionID | 1<<fText | 1<<fAssertedBy | 1<<fConfidence | 1<<fSource | 1<<fAssertedAt
	needEvidence  = 1<<fEvidenceID | 1<<fPolarity | 1<<fSource | 1<<fContent | 1<<fObservedAt
	needCheck     = 1<<fCheckID | 1<<fMethod | 1<<fScope | 1<<fSource | 1<<fObservedAt | 1<<fResult
	needConflict  = 1<<fConflictID | 1<<fStatus | 1<<fPropositionIDs
	needEdge      = 1<<fKind | 1<<fFromID | 1<<fToID
	needSource    = 1<<fSourceID | 1<<fLineageID | 1<<fOriginType | 1<<fOriginLocator |
		1<<fSnapshotID | 1<<fContentHash | 1<<fObservedAt
)

// decode returns the view in s, or nil when the general path must decide.
// s ends with the NUL sentinel pyjson.Scanner wants. With doc non-nil,
// decode also reads the document members into doc.
func (f *fastDecoder) decode(s string, doc *Document) *View {
	f.sc.Reset(s)
	f.src.reset()
	f.raw = f.raw[:0]
	f.lim = f.lim.withDefaults()
	f.records = 0
	v := &View{RetrievalScope: DefaultRetrievalScope, Freshness: DefaultFreshness, AdapterMeta: "{}"}
	if !f.sc.Object() {
		return nil
	}
	var seen uint64
	for i := range f.members(viewOrder, &seen) {
		if !f.top(i, v, doc) {
			return nil
		}
	}
	if !f.sc.End() || seen&(1<<fPropositionID) == 0 || !f.finish(v) || !f.shortStrings(len(s)-1, v, doc) {
		return nil
	}
	return v
}

// shortStrings reports whether no string of the view (or document) is over
// MaxStringBytes. Every string the fast path takes is a string of the
// text, so a text no longer than the limit needs no look.
func (f *fastDecoder) shortStrings(textLen int, v *View, doc *Document) bool {
	if !exceeds(textLen, f.lim.MaxStringBytes) {
		return true
	}
	return f.lim.checkStrings(v) == nil && (doc == nil || f.lim.checkEvaluatedAt(doc.EvaluatedAt) == nil)
}

// next reads the next member name of the object being read and returns
// its field index, skipping members no view field has. ok is false at the
// end of the object, and on a repeated member, which stops the scanner.
// guess is the member expected next (-1: none), checked before reading
// the name in full.
func (f *fastDecoder) next(seen *uint64, guess int8) (int, bool) {
	sc := &f.sc
	for sc.Member() {
		var i int
		if guess >= 0 && sc.NameIs(&fieldNeedles[guess]) {
			i = int(guess)
		} else if i = fieldIndex(sc.Name()); i < 0 {
			sc.Skip()
			continue
		}
		if *seen&(1<<i) != 0 {
			sc.Stop()
			return -1, false
		}
		*seen |= 1 << i
		return i, true
	}
	return -1, false
}

// fieldNeedles are the member names made ready for Scanner.NameIs.
var fieldNeedles = func() (nd [numFields]pyjson.Needle) {
	for i, name := range fieldNames {
		nd[i] = pyjson.NewNeedle(name)
	}
	return nd
}()

// members yields the field index of each member of the object being
// read, in order, and records in seen which ones it met. It ends at the
// end of the object, or when the scanner stops.
func (f *fastDecoder) members(o *memberOrder, seen *uint64) iter.Seq[int] {
	return func(yield func(int) bool) {
		for guess := o.first; ; {
			i, ok := f.next(seen, guess)
			if !ok || !yield(i) {
				return
			}
			guess = o.after[i]
		}
	}
}

// memberOrder guesses the member that comes next in one kind of object:
// the one after it in sorted order, as the reference (json.dumps with
// sort_keys) and this package's stored form write them.
type memberOrder struct {
	first int8
	after [numFields]int8
}

func sortedOrder(members ...int) *memberOrder {
	slices.SortFunc(members, func(a, b int) int { return strings.Compare(fieldNames[a], fieldNames[b]) })
	o := &memberOrder{first: int8(members[0])}
	for i := range o.after {
		o.after[i] = -1
	}
	for k := 0; k+1 < len(members); k++ {
		o.after[members[k]] = int8(members[k+1])
	}
	return o
}

// The member orders of each kind of object, fixed at start-up.
var (
	viewOrder = sortedOrder(fPropositionID, fViewID, fAssertions, fEvidence, fLineage, fConflicts, fChecks,
		fOmittedSources, fRetrievalScope, fDegraded, fFreshness, fSubjects, fAdapterMeta,
		fEvaluatedAt, fPolicyID, fPolicyVersion)
	assertionOrder = sortedOrder(fAssertionID, fText, fAssertedBy, fConfidence, fSource, fAssertedAt, fPropositionID)
	evidenceOrder  = sortedOrder(fEvidenceID, fPolarity, fSource, fContent, fObservedAt, fPropositionID)
	checkOrder     = sortedOrder(fCheckID, fMethod, fScope, fSource, fObservedAt, fResult, fSubjects)
	conflictOrder  = sortedOrder(fConflictID, fStatus, fPropositionIDs, fNote)
	edgeOrder      = sortedOrder(fKind, fFromID, fToID)
	sourceOrder    = sortedOrder(fSourceID, fLineageID, fOriginType, fOriginLocator, fSnapshotID,
		fContentHash, fObservedAt, fExtractorID, fParentSourceID)
)

// top reads one member of the view (or document) object.
func (f *fastDecoder) top(i int, v *View, doc *Document) bool {
	sc := &f.sc
	switch i {
	case fPropositionID:
		v.PropositionID = sc.Str()
		return v.PropositionID != ""
	case fViewID:
		v.ViewID = f.optStr()
	case fAssertions:
		return f.assertions(v)
	case fEvidence:
		return f.evidence(v)
	case fChecks:
		return f.checks(v)
	case fConflicts:
		return f.conflicts(v)
	case fLineage:
		return f.lineage(v)
	case fOmittedSources:
		v.OmittedSources = f.strings()
	case fSubjects:
		v.Subjects = f.strings()
	case fRetrievalScope:
		if !sc.Null() {
			v.RetrievalScope = sc.Str()
		}
	case fDegraded:
		v.Degraded = !sc.Null() && sc.Bool()
	case fFreshness:
		return f.freshness(v)
	case fAdapterMeta:
		return f.adapterMeta(v)
	case fEvaluatedAt, fPolicyID, fPolicyVersion:
		return f.docField(i, doc)
	default:
		sc.Skip()
	}
	return !sc.Failed()
}

func (f *fastDecoder) docField(i int, doc *Document) bool {
	if doc == nil {
		f.sc.Skip()
		return !f.sc.Failed()
	}
	// Only strings and null are taken: the general decoder refuses any
	// other evaluated_at and policy identity.
	s := f.optStr()
	switch i {
	case fEvaluatedAt:
		doc.EvaluatedAt = s
	case fPolicyID:
		doc.PolicyID = s
	default:
		doc.PolicyVersion = s
	}
	return !f.sc.Failed()
}

// optStr reads a string or null (""); anything else gives up.
func (f *fastDecoder) optStr() string {
	if f.sc.Null() {
		return ""
	}
	return f.sc.Str()
}

func (f *fastDecoder) freshness(v *View) bool {
	if f.sc.Null() {
		return true
	}
	lit, kind := f.sc.Number()
	n, err := strconv.ParseInt(pyjson.IntText(lit), 10, 64)
	v.Freshness = n
	return kind == pyjson.Int && err == nil && n >= 0 && n <= MaxFreshness
}

// adapterMeta keeps the object as canonical JSON text. Only a non-empty
// object needs a parse for that.
func (f *fastDecoder) adapterMeta(v *View) bool {
	sc := &f.sc
	if sc.Null() {
		return true
	}
	if k, _ := sc.Peek(); k != pyjson.Object {
		return false
	}
	start := sc.Pos()
	sc.Skip()
	if sc.Failed() {
		return false
	}
	raw := sc.Text(start, sc.Pos())
	if raw == "{}" {
		return true
	}
	x, err := f.meta.Parse(raw)
	if err != nil {
		return false
	}
	var w pyjson.Writer
	writeValue(&w, x)
	v.AdapterMeta = string(w.Buf)
	return f.lim.checkMeta(x, w.Buf) == nil
}

// strings reads a list of non-empty strings, of at most MaxSubjects;
// null is the empty list.
func (f *fastDecoder) strings() []string {
	sc := &f.sc
	if sc.Null() || !sc.Array() {
		return []string{}
	}
	var out []string
	for sc.Elem() {
		s := sc.Str()
		if s == "" || exceeds(len(out)+1, f.lim.MaxSubjects) {
			sc.Stop()
		}
		out = append(out, s)
	}
	if out == nil {
		return []string{}
	}
	return out
}

// text reads a required text member. Only strings are taken: other types
// need str(), which the general path does.
func (f *fastDecoder) text() string { return f.sc.Str() }

// enum reads a string that must be one of allowed.
func (f *fastDecoder) enum(allowed ...string) string {
	s := f.sc.Str()
	for _, a := range allowed {
		if s == a {
			return a
		}
	}
	f.sc.Stop()
	return ""
}

// optPtr reads an optional string: null is nil.
func (f *fastDecoder) optPtr() *string {
	if f.sc.Null() {
		return nil
	}
	return f.ptr(f.sc.Str())
}

// ptr returns a pointer to a new string s, from a block shared by many.
func (f *fastDecoder) ptr(s string) *string {
	if len(f.strs) == cap(f.strs) {
		f.strs = make([]string, 0, 32)
	}
	f.strs = append(f.strs, s)
	return &f.strs[len(f.strs)-1]
}

// copyPtr gives a record its own pointer to an optional string, so that
// records sharing a source share no memory a caller could change.
func (f *fastDecoder) copyPtr(p *string) *string {
	if p == nil {
		return nil
	}
	return f.ptr(*p)
}

// confidence reads a number as float() does; non-finite gives up.
func (f *fastDecoder) confidence() float64 {
	lit, _ := f.sc.Number()
	if x, ok := shortDecimal(lit); ok {
		return x
	}
	x, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		f.sc.Stop()
	}
	return x
}

// pow10 holds the powers of ten a float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal reads a literal like 0.95 or 1: digits, at most one point,
// fifteen digits in all. Its digits and the power of ten are both exact
// floats, so one correctly rounded division gives the nearest float, as
// ParseFloat does. Anything else reports false.
func shortDecimal(lit string) (float64, bool) {
	var m uint64
	digits, point := 0, -1
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = digits
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	if point < 0 {
		return float64(m), true
	}
	return float64(m) / pow10[digits-point], true
}
