package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ewp-go/ewp/schemas"
)

const (
	base         = "https://github.com/ewp-go/ewp/schemas/"
	schemaFile   = "gateway-config.schema.json"
	manifestFile = "manifest.schema.json"
)

var compiled = sync.OnceValues(compile)

func compile() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, name := range []string{schemaFile, manifestFile} {
		raw, err := schemas.FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(base+name, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(base + schemaFile)
}

var printer = message.NewPrinter(language.English)

// validate checks raw against the schema; nil when it passes.
func validate(raw []byte) []Problem {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []Problem{{Rule: "json", Message: "is not one JSON value: " + err.Error()}}
	}
	s, err := compiled()
	if err != nil {
		return []Problem{{Rule: "schema", Message: "the schema does not compile: " + err.Error()}}
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return []Problem{{Rule: "schema", Message: err.Error()}}
	}
	var out []Problem
	leaves(ve, func(e *jsonschema.ValidationError) { out = append(out, problems(e)...) })
	slices.SortStableFunc(out, func(a, b Problem) int { return strings.Compare(a.Pointer, b.Pointer) })
	return slices.Compact(out)
}

// leaves calls fn on the actual problems; the inner nodes only say "a
// $ref failed". A property name's problem stays whole: below it the
// library locates the name as the document itself.
func leaves(e *jsonschema.ValidationError, fn func(*jsonschema.ValidationError)) {
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok || len(e.Causes) == 0 {
		fn(e)
		return
	}
	for _, c := range e.Causes {
		leaves(c, fn)
	}
}

// problems words one leaf: a missing member and a member that may not be
// there are named at their own pointer, the rest at the value's.
func problems(e *jsonschema.ValidationError) []Problem {
	at := schemas.Pointer(e.InstanceLocation)
	rule := keyword(e.ErrorKind)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]Problem, len(k.Missing))
		for i, m := range k.Missing {
			out[i] = Problem{Pointer: at + schemas.Pointer([]string{m}), Rule: rule, Message: "is required"}
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]Problem, len(k.Properties))
		for i, m := range k.Properties {
			out[i] = Problem{Pointer: at + schemas.Pointer([]string{m}), Rule: rule, Message: "is not a known member"}
		}
		return out
	case *kind.FalseSchema:
		return []Problem{{Pointer: at, Rule: "not allowed", Message: "is not allowed here (a server has either command, args, env, cwd or url, headers)"}}
	case *kind.Pattern:
		if m, ok := patternWords[defOf(e.SchemaURL)]; ok {
			return []Problem{{Pointer: at, Rule: rule, Message: fmt.Sprintf("%s; got %q", m, k.Got)}}
		}
	case *kind.PropertyNames:
		// The library locates a property name's problem at the document
		// (v6.0.2); the schema location says which object it is in.
		if at == "" {
			at = objectOf(e.SchemaURL)
		}
		msg := "is not a valid name here"
		if at == "/servers" {
			msg = "is not a server name: lower-case letters, digits and -, with single _ between them (no \"__\"), at most 64"
		}
		return []Problem{{Pointer: at + schemas.Pointer([]string{k.Property}), Rule: rule, Message: msg}}
	}
	return []Problem{{Pointer: at, Rule: rule, Message: e.ErrorKind.LocalizedString(printer)}}
}

// patternWords says in words what a pattern of the schema asks for, by
// the definition it is in.
var patternWords = map[string]string{
	"duration":    "must be a Go duration such as \"30s\", \"500ms\" or \"2m\"",
	"url":         "must be an http:// or https:// URL without spaces",
	"console_url": "must be an http:// or https:// URL without spaces",
}

// defOf names the definition or property a schema location is in:
// "…#/$defs/duration/pattern" is "duration", "…/properties/url/pattern"
// is "url".
func defOf(schemaURL string) string {
	_, frag, _ := strings.Cut(schemaURL, "#")
	parts := strings.Split(strings.TrimSuffix(frag, "/pattern"), "/")
	return parts[len(parts)-1]
}

// keyword names the schema rule a leaf broke ("pattern", "required", …).
func keyword(k jsonschema.ErrorKind) string {
	if p := k.KeywordPath(); len(p) > 0 {
		return p[len(p)-1]
	}
	return "schema"
}

// objectOf turns "...#/properties/servers/propertyNames" into "/servers":
// the instance a top-level property's propertyNames rule applies to.
func objectOf(schemaURL string) string {
	_, frag, _ := strings.Cut(schemaURL, "#")
	frag = strings.TrimSuffix(frag, "/propertyNames")
	if name, ok := strings.CutPrefix(frag, "/properties/"); ok && !strings.Contains(name, "/") {
		return "/" + name
	}
	return ""
}
