package grounding

import (
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
)

// idNamespace seeds deterministic primitive ids, so ingesting the same
// document into two empty ledgers yields the same ids.
var idNamespace = uuid.MustParse("b727755e-ff20-4262-bdf8-7c1402964a64")

// PrimitiveID is the id a new primitive named name receives on ingest or
// learning: a name-based (SHA-1) UUID of its fold key.
func PrimitiveID(name string) string {
	return uuid.NewSHA1(idNamespace, []byte(Fold(name))).String()
}

// ApplyDocument validates doc against g and returns the graph with the
// document applied plus the revisions to persist, in document order. Names
// resolve against the document first, then the graph. A primitive that
// already exists (same folded name) gets a new revision under its existing
// id, keeping its created_at; an unchanged one gets no revision at all, so
// re-ingesting a document is a no-op. New primitives get PrimitiveID(name).
// Everything is stamped with the document's provenance at now. On any
// error nothing is applied.
func (g *Graph) ApplyDocument(doc *Document, now time.Time) (*Graph, []Primitive, error) {
	if err := doc.validate(); err != nil {
		return nil, nil, err
	}
	ids, err := g.documentIDs(doc)
	if err != nil {
		return nil, nil, err
	}
	resolve := func(name string) (string, bool) {
		if id, ok := ids[Fold(name)]; ok {
			return id, true
		}
		if i, ok := g.byFold[Fold(name)]; ok {
			return g.nodes[i].prim.ID, true
		}
		return "", false
	}
	var revs []Primitive
	var docIdx []int
	for i, p := range doc.Primitives {
		old := g.existing(p.Name)
		rev, err := doc.revision(i, ids[Fold(p.Name)], old, resolve, now)
		if err != nil {
			return nil, nil, err
		}
		if old == nil || !samePrimitive(*old, rev) {
			revs, docIdx = append(revs, rev), append(docIdx, i)
		}
	}
	ng, aerr := g.apply(revs)
	if aerr != nil {
		return nil, nil, rootAt(aerr, func(rev int) int { return docIdx[rev] })
	}
	return ng, revs, nil
}

func (g *Graph) existing(name string) *Primitive {
	if i, ok := g.byFold[Fold(name)]; ok {
		return &g.nodes[i].prim
	}
	return nil
}

// documentIDs assigns each document primitive its id: the existing one for
// a known name, PrimitiveID otherwise. A PrimitiveID already held by a
// different name (a renamed primitive) is refused rather than overwritten.
func (g *Graph) documentIDs(doc *Document) (map[string]string, *GraphError) {
	ids := make(map[string]string, len(doc.Primitives))
	for i, p := range doc.Primitives {
		if old := g.existing(p.Name); old != nil {
			ids[Fold(p.Name)] = old.ID
			continue
		}
		id := PrimitiveID(p.Name)
		if j, taken := g.byID[id]; taken {
			return nil, fieldError(fmt.Sprintf("primitives[%d].name", i), p.Name, -1, RuleDuplicateID,
				"id %s for this name is held by primitive %q", id, g.nodes[j].prim.Name)
		}
		ids[Fold(p.Name)] = id
	}
	return ids, nil
}

// revision builds the stored revision of document primitive i. A depth
// whose content equals old's depth at that level keeps old's depth, with
// its provenance, so genealogy survives a re-ingest.
func (d *Document) revision(i int, id string, old *Primitive, resolve func(string) (string, bool), now time.Time) (Primitive, *GraphError) {
	p := d.Primitives[i]
	src := d.provenanceOf(p)
	rev := Primitive{ID: id, Name: p.Name, Provenance: stamp(src, now), Depths: make([]Depth, 0, len(p.Depths))}
	if old != nil {
		rev.Provenance.CreatedAt = old.Provenance.CreatedAt
	}
	for j, dd := range p.Depths {
		depth := Depth{Level: dd.Level, Properties: dd.Properties.clone(), Relata: []Relatum{}, Provenance: stamp(src, now)}
		for k, r := range dd.Relata {
			tid, ok := resolve(r.Target)
			if !ok {
				return rev, fieldError(fmt.Sprintf("primitives[%d].depths[%d].relata[%d].target", i, j, k), p.Name, int(dd.Level),
					RuleUnknownTarget, "%s relatum targets %q, which is neither in the document nor in the graph", r.Type, r.Target)
			}
			depth.Relata = append(depth.Relata, Relatum{RelationType: r.Type, TargetID: tid, TargetDepth: r.TargetDepth,
				Metadata: r.Metadata.clone(), Provenance: stamp(src, now)})
		}
		if old != nil {
			if k := old.depthAt(dd.Level); k >= 0 && sameDepth(old.Depths[k], depth) {
				depth = old.Depths[k]
			}
		}
		rev.Depths = append(rev.Depths, depth)
	}
	return rev, nil
}

// samePrimitive compares content only. Provenance records who first wrote
// a piece of content, so re-ingesting identical content under another
// source changes nothing.
func samePrimitive(a, b Primitive) bool {
	if a.ID != b.ID || a.Name != b.Name || len(a.Depths) != len(b.Depths) {
		return false
	}
	for i := range a.Depths {
		if !sameDepth(a.Depths[i], b.Depths[i]) {
			return false
		}
	}
	return true
}

func sameDepth(a, b Depth) bool {
	if a.Level != b.Level || !sameObject(a.Properties, b.Properties) || len(a.Relata) != len(b.Relata) {
		return false
	}
	for i, r := range a.Relata {
		s := b.Relata[i]
		if r.RelationType != s.RelationType || r.TargetID != s.TargetID || r.TargetDepth != s.TargetDepth || !sameObject(r.Metadata, s.Metadata) {
			return false
		}
	}
	return true
}

// sameObject treats absent and empty as equal, as the stored form does.
func sameObject(a, b JSONObject) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
