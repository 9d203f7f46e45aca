// Package schemas holds JSON Schemas (draft 2020-12) for the inputs of the
// EWP kernel and of ewp-ingest, embedded in the binary, and a small API to
// validate decoded JSON against them.
//
// The schemas describe; the kernel decides. They are never stricter than
// the kernel (warrant.DecodeDocument): every document it accepts validates,
// and a test holds that over the reference pack and the differential
// corpus. They are looser where a rule needs more than one value at a time
// (duplicate ids, records bounded to the view's proposition) or a number's
// spelling, so a document that validates may still be refused. Their use
// is early, located, complete feedback for people and tools that write
// views: a schema reports every problem of a document with its JSON pointer
// where the kernel stops at the first one.
//
// Files (see [FS]):
//
//	evidence-view.schema.json      an EvidenceView (EWP.md §2)
//	evidence-document.schema.json  a view plus evaluated_at, policy_id, policy_version
//	ingest.schema.json             one ewp-ingest input: a document, a list, or {"views": [...]}
//	manifest.schema.json           the operator's tool manifest (tools, default, roots, redact)
package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files, for tools that serve or publish them.
//
//go:embed *.schema.json
var FS embed.FS

// Schema names, as the files are called without ".schema.json".
const (
	View     = "evidence-view"
	Document = "evidence-document"
	Ingest   = "ingest"
	// Manifest is the operator's tool manifest (package manifest), also
	// referred to by the gateway config's schema.
	Manifest = "manifest"
)

// base is the $id prefix of every schema. The files are registered under
// it, so references between them never leave the binary.
const base = "https://github.com/ewp-go/ewp/schemas/"

var compiled = sync.OnceValues(compileAll)

func compileAll() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names := []string{View, Document, Ingest, Manifest}
	for _, n := range names {
		raw, err := FS.ReadFile(n + ".schema.json")
		if err != nil {
			return nil, err
		}
		// UnmarshalJSON keeps numbers as json.Number, so the exact bounds
		// on assertion_confidence survive.
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		if err := c.AddResource(base+n+".schema.json", doc); err != nil {
			return nil, err
		}
	}
	out := make(map[string]*jsonschema.Schema, len(names))
	for _, n := range names {
		s, err := c.Compile(base + n + ".schema.json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		out[n] = s
	}
	return out, nil
}

// Decode parses JSON text the way the validators expect it: numbers stay
// exact (json.Number), so a bound is never checked against a rounded value.
func Decode(raw []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// ValidateView checks one decoded EvidenceView. doc is what Decode (or
// encoding/json) produced. The error is an *Error listing every problem,
// or a plain error when the schema could not run.
func ValidateView(doc any) error { return Validate(View, doc) }

// ValidateDocument checks one EvidenceView document: a view with optional
// evaluated_at, policy_id and policy_version (one item of an ingest input).
func ValidateDocument(doc any) error { return Validate(Document, doc) }

// ValidateIngest checks one whole ewp-ingest input that is a single JSON
// value (not JSON Lines; validate each line with ValidateDocument).
func ValidateIngest(doc any) error { return Validate(Ingest, doc) }

// Validate checks doc against the named schema (View, Document, Ingest or
// Manifest).
func Validate(name string, doc any) (err error) {
	all, err := compiled()
	if err != nil {
		return fmt.Errorf("schemas: %w", err)
	}
	s, ok := all[name]
	if !ok {
		return fmt.Errorf("schemas: no schema named %q", name)
	}
	// A validator bug on hostile input must not take down a loader that
	// only asked for a better error message.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("schemas: validator failed on this document: %v", r)
		}
	}()
	return convert(name, s.Validate(tame(doc)))
}
