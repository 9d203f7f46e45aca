package grounding

import (
	"fmt"
	"time"
)

// Validate checks the rules a document must satisfy on its own (see
// DecodeDocument). It is also run by ApplyDocument, so a Document built in
// Go gets the same checks as a decoded one.
func (d *Document) Validate() error {
	if err := d.validate(); err != nil {
		return err
	}
	return nil
}

func (d *Document) validate() *GraphError {
	if d.Graph == "" {
		return fieldError("graph", "", -1, RuleGraphNameAbsent, "graph name is required")
	}
	if err := checkIngestProvenance(d.Provenance, "provenance", ""); err != nil {
		return err
	}
	if err := d.checkNames(); err != nil {
		return err
	}
	return d.trialApply()
}

// checkIngestProvenance admits authored and learned; synthetic marks engine
// placeholders and may not be ingested (spec §1.3).
func checkIngestProvenance(s ProvenanceSource, path, name string) *GraphError {
	switch s {
	case "", Authored, Learned:
		return nil
	case Synthetic:
		return fieldError(path, name, -1, RuleSyntheticIngest, "synthetic provenance is reserved for engine placeholders")
	}
	return fieldError(path, name, -1, RuleProvenance, "unknown provenance %q", s)
}

func (d *Document) checkNames() *GraphError {
	seen := make(map[string]int, len(d.Primitives))
	for i, p := range d.Primitives {
		path := fmt.Sprintf("primitives[%d]", i)
		if p.Name == "" {
			return fieldError(path+".name", "", -1, RuleEmptyName, "name must not be empty")
		}
		if err := checkIngestProvenance(p.Provenance, path+".provenance", p.Name); err != nil {
			return err
		}
		f := Fold(p.Name)
		if j, dup := seen[f]; dup {
			return fieldError(path+".name", p.Name, -1, RuleDuplicateName,
				"name folds to %q, like primitives[%d] %q", f, j, d.Primitives[j].Name)
		}
		seen[f] = i
	}
	return nil
}

// trialApply runs the graph rules (levels, types, self-reference, cycles)
// on the document alone. Names the document does not define become empty
// placeholders: they have no relata, so they cannot hide or invent a cycle.
func (d *Document) trialApply() *GraphError {
	ids := make(map[string]string, len(d.Primitives))
	for _, p := range d.Primitives {
		ids[Fold(p.Name)] = PrimitiveID(p.Name)
	}
	var placeholders []Primitive
	resolve := func(name string) (string, bool) {
		f := Fold(name)
		if id, ok := ids[f]; ok {
			return id, true
		}
		ids[f] = PrimitiveID(name)
		placeholders = append(placeholders, Primitive{ID: ids[f], Name: name, Provenance: Provenance{Source: Authored}})
		return ids[f], true
	}
	revs := make([]Primitive, len(d.Primitives))
	for i, p := range d.Primitives {
		rev, err := d.revision(i, ids[Fold(p.Name)], nil, resolve, time.Time{})
		if err != nil {
			return err
		}
		revs[i] = rev
	}
	_, err := (&Graph{}).apply(append(revs, placeholders...))
	return rootAt(err, func(rev int) int { return rev })
}

// rootAt re-roots an apply error's path at "primitives[i]".
func rootAt(err *GraphError, docIndex func(rev int) int) *GraphError {
	if err != nil {
		err.Path = fmt.Sprintf("primitives[%d]%s", docIndex(err.rev), err.Path)
	}
	return err
}
