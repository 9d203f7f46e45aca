package warrant

import (
	"math"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

// Document is a fixture-format document: a view plus the instant to
// evaluate it at and, optionally, the policy identity asked for.
type Document struct {
	View *View
	// EvaluatedAt is the instant as given: always a JSON string in the
	// text, never str() of another type; "" when absent or null.
	EvaluatedAt string
	// PolicyID and PolicyVersion are as given; empty when absent.
	PolicyID      string
	PolicyVersion string
}

// DecodeView decodes and validates one EvidenceView from JSON text, within
// DefaultLimits. A refusal is an *Error naming the field and rule: Code
// CodeInvalidView, or CodeLimitExceeded for a view over a limit.
func DecodeView(data []byte) (*View, error) {
	d := Decoder{fast: fastDecoder{once: true}}
	return d.DecodeView(data)
}

// DecodeDocument decodes a fixture-format document: the view's fields plus
// evaluated_at and optional policy_id/policy_version at the top level.
// The policy identity and the type of evaluated_at (a string, or absent or
// null) are checked here; whether it is a parseable instant is Evaluate's.
// The document is held to DefaultLimits, as a view is.
func DecodeDocument(data []byte) (*Document, error) {
	d := Decoder{fast: fastDecoder{once: true}}
	return d.DecodeDocument(data)
}

// A Decoder decodes views one after another, reusing its scratch memory,
// which roughly halves what a long stream of views allocates. A decoded
// view never changes after it is returned, whatever the Decoder does next.
// The zero Decoder is ready to use; it is not safe for concurrent use.
type Decoder struct {
	// Limits bound each view the Decoder reads; a view over one is
	// refused with CodeLimitExceeded. A zero field is its DefaultLimits
	// value, a negative one no limit. The text's size is checked before
	// anything else reads it.
	Limits Limits

	fast fastDecoder
	p    pyjson.Parser
}

// DecodeView is the package-level DecodeView, reusing d's memory, within
// d.Limits.
func (d *Decoder) DecodeView(data []byte) (*View, error) {
	lim := d.Limits.withDefaults()
	if err := lim.checkBytes(len(data)); err != nil {
		return nil, err
	}
	s, padded := copyText(data)
	d.fast.lim = lim
	if v := d.fast.decode(padded, nil); v != nil {
		return v, nil
	}
	return d.generalView(s, lim)
}

// copyText copies the text once: views keep strings that point into it,
// and callers reuse their buffers. padded is the copy with the NUL
// sentinel the fast path's scanner wants; s is the text alone.
func copyText(data []byte) (s, padded string) {
	var b strings.Builder
	b.Grow(len(data) + 1)
	b.Write(data)
	b.WriteByte(0)
	padded = b.String()
	return padded[:len(data)], padded
}

// generalView decodes any view, and refuses with the precise reason.
func (d *Decoder) generalView(s string, lim Limits) (*View, error) {
	root, err := d.parseObject(s)
	if err != nil {
		return nil, err
	}
	return decodeView(root, lim)
}

// DecodeDocument is the package-level DecodeDocument, reusing d's memory,
// within d.Limits.
func (d *Decoder) DecodeDocument(data []byte) (*Document, error) {
	lim := d.Limits.withDefaults()
	if err := lim.checkBytes(len(data)); err != nil {
		return nil, err
	}
	s, padded := copyText(data)
	d.fast.lim = lim
	doc := &Document{}
	if v := d.fast.decode(padded, doc); v != nil && CheckPolicy(doc.PolicyID, doc.PolicyVersion) == nil {
		doc.View = v
		return doc, nil
	}
	return d.generalDocument(s, lim)
}

// generalDocument decodes any document, and refuses with the precise
// reason.
func (d *Decoder) generalDocument(s string, lim Limits) (*Document, error) {
	root, err := d.parseObject(s)
	if err != nil {
		return nil, err
	}
	doc := &Document{}
	if doc.EvaluatedAt, err = evaluatedAt(root); err != nil {
		return nil, err
	}
	if doc.PolicyID, err = policyField(root, "policy_id"); err != nil {
		return nil, err
	}
	if doc.PolicyVersion, err = policyField(root, "policy_version"); err != nil {
		return nil, err
	}
	if err := CheckPolicy(doc.PolicyID, doc.PolicyVersion); err != nil {
		return nil, err
	}
	if doc.View, err = decodeView(root, lim); err != nil {
		return nil, err
	}
	if err := lim.checkEvaluatedAt(doc.EvaluatedAt); err != nil {
		return nil, err
	}
	return doc, nil
}

// CheckPolicy refuses any policy identity but reference-v2; an empty
// string means "not given" and selects the default.
func CheckPolicy(id, version string) error {
	if (id == "" || id == PolicyID) && (version == "" || version == PolicyVersion) {
		return nil
	}
	return &Error{Code: CodeUnknownPolicy, Field: "policy_id",
		Rule: "only policy reference-v2 (version reference-v2) is implemented; got " + quote(id) + " version " + quote(version)}
}

// evaluatedAt reads a document's evaluated_at. Unlike ids and texts it is
// not str()-normalised: the reference refuses every other type, and str()
// would turn the integer 20260901 into a basic-format date it evaluates at.
func evaluatedAt(obj *fields) (string, error) {
	x, ok := obj.Get("evaluated_at")
	if !ok || x.IsNull() {
		return "", nil
	}
	if x.Kind() != pyjson.String {
		return "", invalid("evaluated_at", "must be a string holding an ISO 8601 instant (e.g. \"2026-09-21T18:00:00Z\"), not %s", typeName(x))
	}
	return x.Str(), nil
}

func policyField(obj *fields, key string) (string, error) {
	v, ok := obj.Get(key)
	if !ok || v.IsNull() {
		return "", nil
	}
	if v.Kind() != pyjson.String {
		return "", &Error{Code: CodeUnknownPolicy, Field: key, Rule: "must be a string"}
	}
	return v.Str(), nil
}

// parseObject parses the text as one JSON object.
func (d *Decoder) parseObject(s string) (*fields, error) {
	root, err := d.p.Parse(s)
	if err != nil {
		return nil, invalid("", "%s", err.Error())
	}
	if root.Kind() != pyjson.Object {
		return nil, invalid("", "an EvidenceView must be a JSON object")
	}
	f := &fields{}
	f.scan(root)
	return f, nil
}

// decoder carries the view-level context records are checked against.
type decoder struct {
	prop     string
	lim      Limits
	sources  sourceSet
	sourceAt []loc // where each of sources was first met
}

func decodeView(obj *fields, lim Limits) (*View, error) {
	v := &View{}
	var err error
	if v.PropositionID, err = propositionID(obj); err != nil {
		return nil, err
	}
	d := decoder{prop: v.PropositionID, lim: lim}
	if err = d.scalars(obj, v); err != nil {
		return nil, err
	}
	if err = d.records(obj, v); err != nil {
		return nil, err
	}
	if err = lim.checkStrings(v); err != nil {
		return nil, err
	}
	if v.ViewID == "" {
		v.ViewID = DerivedViewID(v)
		v.ViewIDDerived = true
	}
	return v, nil
}

func propositionID(obj *fields) (string, error) {
	p, ok := obj.Get("proposition_id")
	switch {
	case !ok || p.IsNull():
		return "", invalid("proposition_id", "is required")
	case p.Kind() != pyjson.String:
		return "", invalid("proposition_id", "must be a string, not %s", typeName(p))
	case p.Str() == "":
		return "", invalid("proposition_id", "must not be empty")
	}
	return p.Str(), nil
}

func (d *decoder) scalars(obj *fields, v *View) error {
	var err error
	if v.ViewID, err = viewID(obj); err != nil {
		return err
	}
	if v.OmittedSources, err = d.stringList(obj, "omitted_sources", loc{}); err != nil {
		return err
	}
	if v.Subjects, err = d.stringList(obj, "subjects", loc{}); err != nil {
		return err
	}
	if v.RetrievalScope, err = retrievalScope(obj); err != nil {
		return err
	}
	if v.Degraded, err = degraded(obj); err != nil {
		return err
	}
	if v.Freshness, err = freshness(obj); err != nil {
		return err
	}
	v.AdapterMeta, err = d.adapterMeta(obj)
	return err
}

func viewID(obj *fields) (string, error) {
	x, ok := obj.Get("view_id")
	if !ok || x.IsNull() {
		return "", nil
	}
	switch x.Kind() {
	case pyjson.String:
		return x.Str(), nil
	case pyjson.Int:
		return pyjson.IntText(x.Str()), nil
	}
	return "", invalid("view_id", "must be a string or an integer, not %s", typeName(x))
}

func retrievalScope(obj *fields) (string, error) {
	x, ok := obj.Get("retrieval_scope")
	if !ok || x.IsNull() {
		return DefaultRetrievalScope, nil
	}
	if x.Kind() != pyjson.String {
		return "", invalid("retrieval_scope", "must be a string, not %s", typeName(x))
	}
	return x.Str(), nil
}

func degraded(obj *fields) (bool, error) {
	x, ok := obj.Get("degraded")
	if !ok || x.IsNull() {
		return false, nil
	}
	if x.Kind() != pyjson.Bool {
		return false, invalid("degraded", "must be a boolean, not %s", typeName(x))
	}
	return x.Bool(), nil
}

func freshness(obj *fields) (int64, error) {
	x, ok := obj.Get("freshness_policy_seconds")
	if !ok || x.IsNull() {
		return DefaultFreshness, nil
	}
	if x.Kind() != pyjson.Int {
		return 0, invalid("freshness_policy_seconds", "must be a JSON integer, not %s", typeName(x))
	}
	n, err := strconv.ParseInt(pyjson.IntText(x.Str()), 10, 64)
	if err != nil || n < 0 || n > MaxFreshness {
		return 0, invalid("freshness_policy_seconds", "must be an integer from 0 to 2^53-1; got %s", x.Str())
	}
	return n, nil
}

func (d *decoder) adapterMeta(obj *fields) (string, error) {
	x, ok := obj.Get("adapter_meta")
	if !ok || x.IsNull() {
		return "{}", nil
	}
	if x.Kind() != pyjson.Object {
		return "", invalid("adapter_meta", "must be an object, not %s", typeName(x))
	}
	var w pyjson.Writer
	writeValue(&w, x)
	if err := d.lim.checkMeta(x, w.Buf); err != nil {
		return "", err
	}
	return string(w.Buf), nil
}

// stringList reads a list of non-empty strings, of at most MaxSubjects.
// A bare string is never read as a list of characters.
func (d *decoder) stringList(obj *fields, key string, l loc) ([]string, error) {
	x, ok := obj.Get(key)
	if !ok || x.IsNull() {
		return []string{}, nil
	}
	if x.Kind() != pyjson.Array {
		return nil, invalid(l.field(key), "must be a list of non-empty strings, not %s", typeName(x))
	}
	if err := d.lim.checkList(l.field(key), x.Len()); err != nil {
		return nil, err
	}
	out := make([]string, x.Len())
	var err error
	x.Elems(func(i int, el pyjson.Value) bool {
		if el.Kind() != pyjson.String || el.Str() == "" {
			err = invalid(l.field(key)+"["+strconv.Itoa(i)+"]", "must be a non-empty string, not %s", typeName(el))
			return false
		}
		out[i] = el.Str()
		return true
	})
	return out, err
}

// recordArray returns a record array; missing or null is an empty list,
// anything that is not a list is refused.
func recordArray(obj *fields, key string) (pyjson.Value, error) {
	x, ok := obj.Get(key)
	if !ok || x.IsNull() {
		return pyjson.Value{}, nil
	}
	if x.Kind() != pyjson.Array {
		return pyjson.Value{}, invalid(key, "must be a list, not %s", typeName(x))
	}
	return x, nil
}

// reqText reads a required id/text/timestamp field, normalised like
// Python's str(): present and not null, any JSON type.
func reqText(obj *fields, key string, l loc) (string, error) {
	x, ok := obj.Get(key)
	if !ok || x.IsNull() {
		return "", invalid(l.field(key), "is required (present and not null)")
	}
	return pyjson.Str(x), nil
}

func optText(obj *fields, key string) (string, bool) {
	x, ok := obj.Get(key)
	if !ok || x.IsNull() {
		return "", false
	}
	return pyjson.Str(x), true
}

func enumField(obj *fields, key string, l loc, allowed ...string) (string, error) {
	x, ok := obj.Get(key)
	if !ok || x.IsNull() {
		return "", invalid(l.field(key), "is required (present and not null)")
	}
	if x.Kind() == pyjson.String {
		for _, a := range allowed {
			if x.Str() == a {
				return a, nil
			}
		}
	}
	return "", invalid(l.field(key), "must be one of %s; got %s", strings.Join(allowed, ", "), pyjson.StrRepr(pyjson.Str(x)))
}

func typeName(v pyjson.Value) string {
	switch v.Kind() {
	case pyjson.Null:
		return "null"
	case pyjson.Bool:
		return "a boolean"
	case pyjson.Int, pyjson.Float:
		return "a number"
	case pyjson.String:
		if v.Str() == "" {
			return "an empty string"
		}
		return "a string"
	case pyjson.Array:
		return "a list"
	}
	return "an object"
}

// finiteNumber reads a JSON number as Python's float() would and refuses
// non-finite results (an integer or literal too large for a float64).
func finiteNumber(x pyjson.Value) (float64, bool) {
	if x.Kind() != pyjson.Int && x.Kind() != pyjson.Float {
		return 0, false
	}
	if math.IsInf(x.Float(), 0) || math.IsNaN(x.Float()) {
		return 0, false
	}
	return x.Float(), true
}
