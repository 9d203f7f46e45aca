package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Unknown is a member of a document that its schema does not name. The
// kernel ignores such members (the protocol allows them), so a mistyped
// key is stored silently: "asertions" leaves a view with no assertions.
type Unknown struct {
	// Pointer locates the member as an RFC 6901 JSON pointer into the
	// document, e.g. /assertions/0/confidence.
	Pointer string
	Key     string
	// Nearest is the known key at that place closest to Key by edit
	// distance, or "" when none is close enough to be a likely typo.
	Nearest string
}

// shape is what the schemas say about the members of an object: the
// names they know and the shape of each, and the shape of a list's items.
// An object with no named properties (adapter_meta, a free-form text
// value) is open: its members are nobody's business.
type shape struct {
	props map[string]*shape
	items *shape
}

var documentShape = sync.OnceValues(func() (*shape, error) {
	files := map[string]map[string]any{}
	for _, n := range []string{View, Document} {
		raw, err := FS.ReadFile(n + ".schema.json")
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // the bounds on assertion_confidence overflow a float64
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		files[n+".schema.json"] = doc
	}
	file := Document + ".schema.json"
	return shapeOf(files, file, files[file]), nil
})

// shapeOf reads one schema node of file, following $ref (within the
// file, "#/$defs/NAME", or to another file by name) and merging what the
// reference and the node itself name. The published schemas have no
// recursive references.
func shapeOf(files map[string]map[string]any, file string, node map[string]any) *shape {
	s := &shape{}
	if ref, ok := node["$ref"].(string); ok {
		refFile, target := file, files[file]
		name, frag, _ := strings.Cut(ref, "#")
		if name != "" {
			refFile, target = name, files[name]
		}
		if def, ok := strings.CutPrefix(frag, "/$defs/"); ok {
			defs, _ := target["$defs"].(map[string]any)
			target, _ = defs[def].(map[string]any)
		}
		if target != nil {
			*s = *shapeOf(files, refFile, target)
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		merged := map[string]*shape{}
		for k, v := range s.props {
			merged[k] = v
		}
		for k, v := range props {
			sub, _ := v.(map[string]any)
			merged[k] = shapeOf(files, file, sub)
		}
		s.props = merged
	}
	if items, ok := node["items"].(map[string]any); ok {
		s.items = shapeOf(files, file, items)
	}
	return s
}

// UnknownMembers lists the members of an EvidenceView document (decoded
// JSON, as from Decode or encoding/json) that the Document schema does not
// name, at any depth, ordered by pointer. Members of free-form objects
// (adapter_meta, a text field given as an object) are never listed.
func UnknownMembers(doc any) ([]Unknown, error) {
	s, err := documentShape()
	if err != nil {
		return nil, err
	}
	var out []Unknown
	walkUnknown(s, doc, "", &out)
	slices.SortFunc(out, func(a, b Unknown) int { return strings.Compare(a.Pointer, b.Pointer) })
	return out, nil
}

func walkUnknown(s *shape, v any, at string, out *[]Unknown) {
	switch v := v.(type) {
	case map[string]any:
		if s.props == nil {
			return
		}
		for k, sub := range v {
			p := at + "/" + escapePointer(k)
			known, ok := s.props[k]
			if !ok {
				*out = append(*out, Unknown{Pointer: p, Key: k, Nearest: nearest(k, s.props)})
				continue
			}
			walkUnknown(known, sub, p, out)
		}
	case []any:
		if s.items == nil {
			return
		}
		for i, sub := range v {
			walkUnknown(s.items, sub, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// nearest returns the known key closest to key, when it is within a
// third of key's length (at least 2) edits: close enough to be a typo,
// not just another word.
func nearest(key string, known map[string]*shape) string {
	best, bestD := "", -1
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	slices.Sort(names) // ties go to the first name, the same on every run
	for _, k := range names {
		if d := editDistance(strings.ToLower(key), k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 || bestD > max(2, len([]rune(key))/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
