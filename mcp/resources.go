package mcp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/warrant"
)

//go:embed protocol.md
var protocolDoc string

const (
	protocolURI         = "ewp://protocol"
	propositionPrefix   = "ewp://proposition/"
	propositionTemplate = propositionPrefix + "{proposition_id}"
	warrantTemplate     = propositionPrefix + "{proposition_id}/warrant?evaluated_at={evaluated_at}"
)

func (s *Server) registerResources() {
	s.mcp.AddResource(mcpgo.NewResource(protocolURI, "EWP protocol",
		mcpgo.WithResourceDescription("How warrant is computed and how to use it: layers, axes, the action gate, packet rules."),
		mcpgo.WithMIMEType("text/markdown")), s.readProtocol)
	s.mcp.AddResourceTemplate(mcpgo.NewResourceTemplate(propositionTemplate, "Stored proposition",
		mcpgo.WithTemplateDescription("The latest stored EvidenceView of a proposition (percent-encode the id)."),
		mcpgo.WithTemplateMIMEType("application/json")), s.readResource)
	s.mcp.AddResourceTemplate(mcpgo.NewResourceTemplate(warrantTemplate, "Warrant of a proposition",
		mcpgo.WithTemplateDescription("The WarrantView of a proposition's latest snapshot at evaluated_at "+
			"(ISO 8601; a raw '+' in the offset is kept as '+')."),
		mcpgo.WithTemplateMIMEType("application/json")), s.readResource)
	s.registerDecisionResource()
}

func (s *Server) readProtocol(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: protocolURI, MIMEType: "text/markdown", Text: protocolDoc}}, nil
}

// readResource serves both templates. It parses the URI itself instead of
// trusting the template match, so the percent-decoding rules live in one
// place (parseResourceURI).
func (s *Server) readResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	ref, rerr := parseResourceURI(req.Params.URI)
	if rerr != nil {
		return nil, rerr
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	body, rerr := s.resolve(ctx, ref)
	if rerr != nil {
		return nil, rerr
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
}

// resourceRef is a parsed ewp://proposition/... URI.
type resourceRef struct {
	pid     string
	warrant bool
	t       string // evaluated_at, warrant resources only
}

// canonical is the URI with every byte outside RFC 3986's unreserved set
// percent-encoded: the form mcp-go's template matcher accepts.
func (r resourceRef) canonical() string {
	u := propositionPrefix + escapeAll(r.pid)
	if r.warrant {
		u += "/warrant?evaluated_at=" + escapeAll(r.t)
	}
	return u
}

// resourceError is a resources/read failure with its JSON-RPC meaning.
type resourceError struct {
	unknown bool // the URI names no resource: -32002 (or the revision's code)
	code    string
	msg     string
}

func (e *resourceError) Error() string { return e.code + ": " + e.msg }

func unknownResource(code, format string, a ...any) *resourceError {
	return &resourceError{unknown: true, code: code, msg: fmt.Sprintf(format, a...)}
}

// parseResourceURI parses ewp://proposition/<id>[/warrant?evaluated_at=<T>].
// The id is one percent-decoded path segment (so "/" in an id is %2F); the
// query value is percent-decoded without form decoding, so a raw '+' in an
// offset such as +02:00 stays '+'.
func parseResourceURI(uri string) (resourceRef, *resourceError) {
	rest, ok := strings.CutPrefix(uri, propositionPrefix)
	if !ok {
		return resourceRef{}, unknownResource(CodeInvalidArgument, "no resource %q; see resources/list and resources/templates/list", uri)
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	seg, tail, hasTail := strings.Cut(path, "/")
	pid, err := url.PathUnescape(seg)
	if err != nil || pid == "" {
		return resourceRef{}, unknownResource(CodeInvalidArgument, "%q: the proposition id must be one non-empty, percent-encoded path segment", uri)
	}
	if rerr := decodedText("proposition id", pid); rerr != nil {
		return resourceRef{}, rerr
	}
	if !hasTail {
		if hasQuery {
			return resourceRef{}, unknownResource(CodeInvalidArgument, "%q: a proposition resource takes no query", uri)
		}
		return resourceRef{pid: pid}, nil
	}
	if tail != "warrant" {
		return resourceRef{}, unknownResource(CodeInvalidArgument, "%q: expected %s or %s", uri, propositionTemplate, warrantTemplate)
	}
	t, rerr := evaluatedAtQuery(query, hasQuery)
	return resourceRef{pid: pid, warrant: true, t: t}, rerr
}

// evaluatedAtQuery reads the warrant resource's query: evaluated_at, once.
// No query, or an empty one, is a missing evaluated_at; so is an empty
// value. A repeated evaluated_at is refused, never resolved first- or
// last-wins.
func evaluatedAtQuery(query string, hasQuery bool) (string, *resourceError) {
	var t string
	seen := false
	for _, kv := range strings.Split(query, "&") {
		if !hasQuery || kv == "" {
			continue // "?", "&&" and a trailing "&" name nothing
		}
		k, v, _ := strings.Cut(kv, "=")
		if k != "evaluated_at" {
			return "", &resourceError{code: CodeInvalidArgument, msg: fmt.Sprintf("unknown query parameter %q; the warrant resource takes evaluated_at only", k)}
		}
		if seen {
			return "", &resourceError{code: CodeInvalidArgument, msg: "evaluated_at is given more than once; give the one instant to evaluate at"}
		}
		seen = true
		dec, err := url.PathUnescape(v)
		if err != nil {
			return "", &resourceError{code: CodeInvalidArgument, msg: fmt.Sprintf("evaluated_at %q is not validly percent-encoded", v)}
		}
		if rerr := decodedText("evaluated_at", dec); rerr != nil {
			return "", rerr
		}
		t = dec
	}
	if t == "" {
		return "", &resourceError{code: warrant.CodeMissingEvaluatedAt, msg: "evaluated_at is required, e.g. ?evaluated_at=2026-09-21T18:00:00Z"}
	}
	return t, nil
}

// decodedText refuses a percent-decoded URI part that is not valid UTF-8
// rather than let it be read with U+FFFD in place of the bytes (a
// different id). The three-byte form of a UTF-16 surrogate (%ED%A0%80 …
// %ED%BF%BF) is the lone surrogate refusal.
func decodedText(what, s string) *resourceError {
	if utf8.ValidString(s) {
		return nil
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF {
			return &resourceError{code: warrant.CodeLoneSurrogate, msg: fmt.Sprintf("the %s percent-decodes to a lone "+
				"UTF-16 surrogate, which is not text; it is refused rather than read as U+FFFD: send valid UTF-8", what)}
		}
	}
	return &resourceError{code: CodeInvalidArgument, msg: fmt.Sprintf("the %s percent-decodes to invalid UTF-8; "+
		"it is refused rather than read as U+FFFD: percent-encode valid UTF-8", what)}
}

// check is the cheap part of resolve, for the JSON-RPC pre-filter: the
// proposition exists and evaluated_at is an instant. What passes it can
// only fail later for an internal reason.
func (s *Server) check(ctx context.Context, ref resourceRef) *resourceError {
	if _, rerr := s.latestFor(ctx, ref); rerr != nil {
		return rerr
	}
	if _, ok := warrant.ParseInstant(ref.t); ref.warrant && !ok {
		return &resourceError{code: warrant.CodeInvalidView, msg: fmt.Sprintf("evaluated_at %q is not a parseable ISO 8601 instant", ref.t)}
	}
	return nil
}

// resolve reads what ref names: the latest stored view, or its
// WarrantView at ref.t.
func (s *Server) resolve(ctx context.Context, ref resourceRef) ([]byte, *resourceError) {
	v, rerr := s.latestFor(ctx, ref)
	if rerr != nil {
		return nil, rerr
	}
	if !ref.warrant {
		return warrant.Encode(v), nil
	}
	w, err := warrant.Evaluate(v, ref.t)
	if err != nil {
		te := asToolError(err)
		return nil, &resourceError{code: te.Error, msg: te.Message}
	}
	body, _ := json.Marshal(filled(w)) // plain strings, bools and numbers
	return body, nil
}

func (s *Server) latestFor(ctx context.Context, ref resourceRef) (*warrant.View, *resourceError) {
	v, err := s.store.Latest(ctx, ref.pid)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, unknownResource(warrant.CodeMissingView, "no stored snapshot of proposition %q", ref.pid)
	case errors.Is(err, context.DeadlineExceeded):
		te := asToolError(s.timedOut(ctx, err, s.callStart(ctx)))
		return nil, &resourceError{code: te.Error, msg: te.Message}
	case err != nil:
		return nil, &resourceError{code: CodeInternal, msg: "reading the ledger failed: " + err.Error()}
	}
	return v, nil
}

// escapeAll percent-encodes every byte outside A-Z a-z 0-9 - . _ ~.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
