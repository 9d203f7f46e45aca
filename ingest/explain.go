package ingest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/schemas"
	"github.com/ewp-go/ewp/warrant"
)

// maxExplained bounds the refusals per file that get a schema pass. They
// are the ones a person reads (the text report prints maxRefusalsShown),
// and a file of a million bad views should not pay twice for each.
const maxExplained = 100

// maxMore bounds the further problems listed for one refusal.
const maxMore = 5

// explain adds what the JSON Schema (package schemas) knows to the
// kernel's refusal of a view: a JSON pointer for the refusal, more precise
// than the kernel's field where the schema can tell, and the further
// problems of the same view, which the kernel, stopping at the first, does
// not report. The kernel stays the authority: code, field and rule are
// left as they are, and the schema only runs on views the kernel has
// already refused (the first maxExplained of an input), so it can neither
// reject an accepted view nor slow an accepting load.
func explain(r *Refusal, raw []byte) {
	r.Pointer = fieldPointer(r.Field)
	doc, err := schemas.Decode(raw)
	if err != nil {
		return // not JSON: the kernel's byte offset is as precise as it gets
	}
	var se *schemas.Error
	if !errors.As(schemas.ValidateDocument(doc), &se) {
		return // a rule beyond a schema (duplicate ids, foreign records...)
	}
	primary := pick(se.Problems, r.Pointer, r.Code)
	if primary >= 0 {
		r.Pointer = se.Problems[primary].Pointer
	}
	var more []string
	for i, p := range se.Problems {
		if i != primary {
			more = append(more, p.String())
		}
	}
	if len(more) > maxMore {
		more = append(more[:maxMore], fmt.Sprintf("and %d more", len(more)-maxMore))
	}
	r.More = more
}

// pick chooses the schema problem that is the kernel's refusal: one at the
// kernel's location, else one inside it (a more precise location), else
// for a policy refusal the policy field actually at fault (the kernel
// names policy_id for either). -1 when none matches.
func pick(ps []schemas.Problem, kernel, code string) int {
	inside := -1
	for i, p := range ps {
		switch {
		case p.Pointer == kernel:
			return i
		case inside < 0 && strings.HasPrefix(p.Pointer, kernel+"/"):
			inside = i
		case inside < 0 && code == warrant.CodeUnknownPolicy && (p.Pointer == "/policy_id" || p.Pointer == "/policy_version"):
			inside = i
		}
	}
	return inside
}

// fieldPointer turns a kernel field path ("checks[2].result") into a JSON
// pointer ("/checks/2/result"). Field names hold no "/", "~", "." or "[".
func fieldPointer(field string) string {
	if field == "" {
		return ""
	}
	r := strings.NewReplacer("[", "/", "]", "", ".", "/")
	return "/" + r.Replace(field)
}

// schemaNote is what String adds for an explained refusal: the pointer
// when it is more precise than the field, and the further problems.
func (r Refusal) schemaNote() string {
	var b strings.Builder
	if r.Pointer != "" && r.Pointer != fieldPointer(r.Field) {
		b.WriteString(" [at " + r.Pointer + "]")
	}
	if len(r.More) > 0 {
		b.WriteString(" (the schema also finds: " + strings.Join(r.More, "; ") + ")")
	}
	return b.String()
}
