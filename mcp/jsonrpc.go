package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/identity"
)

// The JSON-RPC pre-filter. mcp-go answers most malformed messages, but not
// always as JSON-RPC 2.0 and EWP.md §11 require:
//
//   - "id": null is read as a notification and never answered; an id that
//     is an object, array, boolean or fraction is echoed back as if valid,
//     and an integer beyond 2^53 is echoed back rounded. All must get
//     -32600 with a null id.
//   - non-object params fail mcp-go's struct decoding and get -32600; they
//     must get -32602 (so must a non-string tool or prompt name and
//     non-string prompt arguments).
//   - a malformed notification (bad "jsonrpc", non-object params) gets an
//     error reply; notifications are never answered.
//   - a JSON array (a batch) gets -32700 although it is valid JSON; it is
//     an invalid request (-32600).
//   - resources/read: mcp-go's URI templates only match unreserved
//     characters, so a timestamp's ':' or a raw '+' never matches, and a
//     handler error becomes -32603. The filter parses ewp:// URIs itself,
//     answers unknown ones with -32002 (the 2026-07-28 revision's -32602
//     for modern requests, as mcp-go does) and rewrites the rest to a
//     fully percent-encoded form the templates match.
//
// Everything else (-32601 unknown method, -32700 bad JSON, protocol
// negotiation) is mcp-go's own behaviour, passed through.

// verdict is the filter's decision on one message: forward it (possibly
// rewritten) to mcp-go, answer it with reply, or, when both are nil, drop
// it (a notification).
type verdict struct {
	forward []byte
	reply   []byte
	// renamed is the resources/read URI before and after the filter
	// rewrote it, so HTTP can keep the Mcp-Name header in step.
	renamed [2]string
	// modern: the request declared protocol 2026-07-28 or later in _meta,
	// which changes the HTTP status of error replies.
	modern bool
	// direct: a tools/call request whose params carry no _meta, which HTTP
	// may hand straight to the MCP server's dispatch (see httpFront.direct).
	direct bool
	// call: a tools/call HTTP may serve without mcp-go at all (see
	// plainCall); nil otherwise.
	call *toolCall
	// request: forward is a request mcp-go will answer, which stdio
	// waits for at end of input.
	request bool
}

// toolCall is a tools/call request reduced to what serving it needs.
type toolCall struct {
	id   []byte // as mcp-go would echo it
	tool *toolSpec
	args json.RawMessage
}

type message map[string]json.RawMessage

func (s *Server) screen(ctx context.Context, msg []byte) verdict {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return verdict{}
	}
	// The message is validated once, here; from then on its parts are
	// split (splitObject), never checked or copied again.
	if !json.Valid(msg) {
		return verdict{reply: errorReply(nil, mcpgo.PARSE_ERROR, "parse error: the message is not valid JSON", nil)}
	}
	split, dup, ok := splitMembers(msg)
	if !ok {
		return verdict{reply: errorReply(nil, mcpgo.INVALID_REQUEST, "a JSON-RPC message must be an object; batches are not supported", nil)}
	}
	m := message(split)
	problem := envelopeProblem(m, dup)
	if _, hasID := m["id"]; !hasID {
		if problem != "" {
			return verdict{} // not certainly a notification, but never answered as a request
		}
		return screenNotification(m, msg)
	}
	if problem != "" {
		// The id itself may be what is wrong, so it is never echoed.
		return verdict{reply: errorReply(nil, mcpgo.INVALID_REQUEST, problem, nil)}
	}
	if m.isResponse() {
		return verdict{forward: msg} // a client's answer to a server request
	}
	return s.screenRequest(ctx, m, msg)
}

func (m message) isResponse() bool {
	_, method := m["method"]
	return !method && m.carriesOutcome()
}

// screenNotification forwards a well-formed notification and drops any
// other message without an id: a notification is never answered.
func screenNotification(m message, msg []byte) verdict {
	if string(m["jsonrpc"]) != `"2.0"` || m.method() == "" || !m.paramsOK() || m.hasParamsProblem() {
		return verdict{}
	}
	return verdict{forward: msg}
}

func (s *Server) screenRequest(ctx context.Context, m message, msg []byte) verdict {
	id := m["id"]
	v := verdict{modern: m.modern()}
	var paramsProblem string
	var problemData *toolError
	var params message // nil when params are not an object: never reached below
	if m.paramsOK() {
		var dup string
		params, dup = m.params()
		paramsProblem, problemData = m.paramsProblem(params, dup)
	}
	switch {
	case !validID(id):
		v.reply = errorReply(nil, mcpgo.INVALID_REQUEST, "id must be a string or an integer within ±(2^53-1); got "+describe(id), nil)
	case string(m["jsonrpc"]) != `"2.0"`:
		v.reply = errorReply(id, mcpgo.INVALID_REQUEST, `"jsonrpc" must be "2.0"`, nil)
	case m.method() == "":
		v.reply = errorReply(id, mcpgo.INVALID_REQUEST, `"method" must be a non-empty string`, nil)
	case !m.paramsOK():
		v.reply = errorReply(id, mcpgo.INVALID_PARAMS, `"params" must be an object; got `+kindOf(m["params"]), nil)
	case paramsProblem != "":
		var data any // a nil *toolError would encode as "data": null
		if problemData != nil {
			data = problemData
		}
		v.reply = errorReply(id, mcpgo.INVALID_PARAMS, paramsProblem, data)
	case m.carriesOutcome():
		v.reply = errorReply(id, mcpgo.INVALID_REQUEST, `a request carries no "result" or "error" member`, nil)
	default:
		// A stdio server started for one agent refuses every request once
		// the operator revoked it (HTTP checks each request's credential).
		if re := s.recheck(ctx); re != nil {
			v.reply = errorReply(id, mcpgo.INVALID_REQUEST, re.Reason, toolError{Error: re.Code, Message: re.Reason})
			return v
		}
		v = s.screenMethod(ctx, m, params, msg, v)
		v.request = v.forward != nil
	}
	return v
}

// recheck is identity.Recheck under the per-request deadline: the stdio
// reader waits for it before it reads the next line, so a register that
// does not answer (a frozen database) costs a request its deadline, never
// the session.
func (s *Server) recheck(ctx context.Context) *identity.RecheckError {
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	return identity.Recheck(ctx)
}

func (m message) hasParamsProblem() bool {
	problem, _ := m.paramsProblem(m.params())
	return problem != ""
}

// carriesOutcome: a request with a result or error member, which mcp-go
// takes for a response and never answers.
func (m message) carriesOutcome() bool {
	_, result := m["result"]
	_, failed := m["error"]
	return result || failed
}

// screenMethod applies the per-method checks mcp-go gets wrong.
func (s *Server) screenMethod(ctx context.Context, m, params message, msg []byte, v verdict) verdict {
	id := m["id"]
	switch mcpgo.MCPMethod(m.method()) {
	case mcpgo.MethodToolsCall:
		if !isString(params["name"]) {
			v.reply = errorReply(id, mcpgo.INVALID_PARAMS, "params.name must be the tool name (a string)", nil)
			return v
		}
		v.direct = m.withoutMeta()
		v.call = s.plainCall(m, params)
	case mcpgo.MethodPromptsGet:
		if !isString(params["name"]) || !stringMap(params["arguments"]) {
			v.reply = errorReply(id, mcpgo.INVALID_PARAMS, "params.name must be a string and params.arguments an object of strings", nil)
			return v
		}
	case mcpgo.MethodResourcesRead:
		return s.screenRead(ctx, m, params, msg, v)
	}
	v.forward = msg
	return v
}

// screenRead checks and canonicalises an ewp://proposition/ URI.
func (s *Server) screenRead(ctx context.Context, m, params message, msg []byte, v verdict) verdict {
	id := m["id"]
	var uri string
	if !isString(params["uri"]) || json.Unmarshal(params["uri"], &uri) != nil {
		v.reply = errorReply(id, mcpgo.INVALID_PARAMS, "params.uri must be a string", nil)
		return v
	}
	if strings.HasPrefix(uri, decisionPrefix) {
		return s.screenDecision(ctx, id, uri, msg, v)
	}
	if !strings.HasPrefix(uri, propositionPrefix) {
		v.forward = msg
		return v
	}
	ref, rerr := parseResourceURI(uri)
	if rerr == nil {
		cctx, cancel := s.callContext(ctx)
		rerr = s.check(cctx, ref)
		cancel()
	}
	if rerr != nil {
		v.reply = errorReply(id, rerr.rpcCode(v.modern), rerr.Error(), map[string]string{"error": rerr.code, "message": rerr.msg})
		return v
	}
	v.renamed = [2]string{uri, ref.canonical()}
	params["uri"], _ = json.Marshal(ref.canonical())
	m["params"], _ = json.Marshal(params)
	v.forward, _ = json.Marshal(m)
	return v
}

// rpcCode maps a resource failure to JSON-RPC: unknown resources get the
// revision's not-found code, bad arguments -32602, failures and timeouts
// -32603.
func (e *resourceError) rpcCode(modern bool) int {
	switch {
	case e.code == CodeInternal || e.code == CodeTimeout || e.code == CodeStoreUnavailable:
		return mcpgo.INTERNAL_ERROR
	case e.unknown && !modern:
		return mcpgo.RESOURCE_NOT_FOUND
	}
	return mcpgo.INVALID_PARAMS
}

// plainCall returns the call when mcp-go would read nothing from m beyond
// what serving it without mcp-go reproduces: m has only the jsonrpc, id,
// method and params keys (mcp-go matches keys case-insensitively, so any
// other spelling could stand in for one of them), params only name and
// arguments (no _meta, task or round-trip state), and the tool is
// registered. Otherwise nil, and mcp-go serves the call. So does it a
// call whose arguments hold a number beyond float64, which mcp-go refuses
// as unparsable (it decodes arguments into Go values).
func (s *Server) plainCall(m, params message) *toolCall {
	if !onlyKeys(m, "jsonrpc", "id", "method", "params") || !onlyKeys(params, "name", "arguments") ||
		hugeNumber(params["arguments"]) {
		return nil
	}
	t, ok := s.tools[stringValue(params["name"])]
	if !ok {
		return nil
	}
	return &toolCall{id: echoID(m["id"]), tool: t, args: params["arguments"]}
}

// hugeNumber reports whether valid JSON raw holds a number literal that
// overflows a float64. Only literals long enough or with an exponent are
// parsed, so the common case is one pass over the bytes.
func hugeNumber(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			i = skipString(raw, i) - 1
		case c == '-' || ('0' <= c && c <= '9'):
			j := i
			for j < len(raw) && bytes.IndexByte([]byte("0123456789+-.eE"), raw[j]) >= 0 {
				j++
			}
			lit := raw[i:j]
			if len(lit) > 300 || bytes.ContainsAny(lit, "eE") {
				if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
					return true
				}
			}
			i = j - 1
		}
	}
	return false
}

// onlyKeys reports whether every key of m is one of keys.
func onlyKeys(m message, keys ...string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

func (m message) method() string { return stringValue(m["method"]) }

// stringValue decodes a JSON string; anything else is "".
func stringValue(raw json.RawMessage) string {
	if !isString(raw) {
		return ""
	}
	// A valid JSON string of plain ASCII is its own text between the quotes.
	if plainASCII(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// paramsOK: params may be absent or null (null is missing) or an object.
func (m message) paramsOK() bool {
	p, ok := m["params"]
	return !ok || string(p) == "null" || p[0] == '{'
}

// params are the members of params (paramsOK held), and the first key
// given twice ("" when none); absent or null is empty.
func (m message) params() (message, string) {
	p, dup, _ := splitMembers(m["params"])
	if p == nil {
		p = message{}
	}
	return p, dup
}

// modern reports whether the request declares protocol 2026-07-28 or
// later in params._meta.
func (m message) modern() bool {
	if m.withoutMeta() {
		return false
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(m["params"], &p) // best effort: absent means legacy
	v, _ := p.Meta[mcpgo.MetaKeyProtocolVersion].(string)
	return mcpgo.IsModernProtocol(v)
}

// withoutMeta reports whether params certainly hold no "_meta" key, in any
// spelling encoding/json would match. mcp-go matches "_meta" as
// encoding/json matches struct fields (with case folding, escapes
// decoded), and so does modern's decoding; plain ASCII params without the
// word in any case cannot hold the key.
func (m message) withoutMeta() bool {
	raw := m["params"]
	return plainASCII(raw) && !containsFold(raw, "_meta")
}

// plainASCII: no escapes and no multi-byte characters, so every key is
// spelled out byte for byte.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFold reports whether b contains word (lower-case ASCII) in any
// mix of ASCII case.
func containsFold(b []byte, word string) bool {
	for i := 0; i+len(word) <= len(b); i++ {
		j := 0
		for j < len(word) {
			c := b[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				break
			}
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// maxID bounds integer ids: mcp-go decodes ids as float64, so a larger one
// would come back as a different number and match no request.
const maxID = 1<<53 - 1

// validID: JSON-RPC ids are strings or integers (a fraction, null, a
// boolean, an array or an object is not an id).
func validID(raw json.RawMessage) bool {
	if isString(raw) {
		return true
	}
	if !isIntLiteral(raw) {
		return false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n <= maxID && n >= -maxID
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// stringMap: absent, null, or an object whose values are all strings.
func stringMap(raw json.RawMessage) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	var m map[string]string
	return raw[0] == '{' && json.Unmarshal(raw, &m) == nil
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// errorReply builds a JSON-RPC error response; a nil id is JSON null.
func errorReply(id json.RawMessage, code int, msg string, data any) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErrorBody    `json:"error"`
	}{mcpgo.JSONRPC_VERSION, id, rpcErrorBody{code, msg, data}})
	return b
}

// handleMessage is the full server for one message: filter, then mcp-go.
// It returns the response bytes, or nil when there is none.
func (s *Server) handleMessage(ctx context.Context, msg []byte) []byte {
	v := s.screen(ctx, msg)
	if v.reply != nil || v.forward == nil {
		return v.reply
	}
	resp := s.mcp.HandleMessage(ctx, v.forward)
	if resp == nil {
		return nil
	}
	b, _ := json.Marshal(resp)
	return b
}
