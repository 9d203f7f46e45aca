package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/mcpwire"
)

// MaxBodyBytes is the default bound of one JSON-RPC message (1 MiB), an
// HTTP body or a stdio line (WithMaxRequestBytes changes it); a larger
// body gets 413, a longer line a JSON-RPC error.
const MaxBodyBytes = 1 << 20

// EndpointPath is where the MCP endpoint is served.
const EndpointPath = "/mcp"

// HTTPConfig configures HTTPHandler.
type HTTPConfig struct {
	// Addr is the address the listener is bound to, host:port. Requests
	// must name it in Host (and Origin, when sent); for a loopback address
	// the other loopback names with the same port are accepted too.
	Addr string
	// AllowedHosts are extra host:port values to accept in Host/Origin,
	// for an operator who binds beyond loopback behind a known name.
	AllowedHosts []string
	// IngestToken grants the ingest role to requests that present it. Empty
	// means no HTTP caller can write. Used only when Auth is nil.
	IngestToken string
	// Auth says who each request is (agent credentials, the ingest token,
	// OAuth access tokens) and serves the Protected Resource Metadata
	// document; nil: one that knows only IngestToken and serves every
	// other caller as anonymous, as before agent identities.
	Auth *identity.Authenticator
}

// HTTPHandler returns the Streamable HTTP endpoint at EndpointPath with
// the protections EWP.md §11 asks for: Host/Origin checks against DNS
// rebinding (403), a body limit (413), the ingest token, and the JSON-RPC
// pre-filter. A plain JSON-RPC POST with Content-Type application/json is
// answered with a JSON body, so curl works.
func (s *Server) HTTPHandler(cfg HTTPConfig) (http.Handler, error) {
	hosts, err := mcpwire.NewHosts(cfg.Addr, cfg.AllowedHosts...)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	inner := server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(EndpointPath),
		// Every request stands alone: a plain POST needs no session, and
		// the server holds no per-client state to leak or exhaust.
		server.WithStateLess(true),
		// Nothing is ever pushed to clients; a GET stream would only hold a
		// connection open past the write timeout.
		server.WithDisableStreaming(true),
		server.WithStreamableHTTPLogger(s.log),
		// httpFront's Host/Origin check is stricter (this server's exact
		// address, and Origin too); mcp-go's own check would also refuse the
		// names an operator allows with AllowedHosts on a loopback bind.
		server.WithDisableLocalhostProtection(true),
	)
	auth := cfg.Auth
	if auth == nil {
		if auth, err = identity.New(context.Background(), identity.Config{IngestToken: cfg.IngestToken,
			Resource: "http://" + cfg.Addr + EndpointPath}); err != nil {
			return nil, err
		}
	}
	return &httpFront{s: s, inner: inner, hosts: hosts, auth: auth}, nil
}

// GCPercent is the garbage collector's target a server process runs with
// when GOGC is not set (ewp-mcp, and the load test serving in process).
// The server's live heap is a few MB, so Go's default of 100 makes it
// collect every few hundred requests; 400 trades a little memory for much
// less GC work under load.
const GCPercent = 400

// NewHTTPServer wraps h in an http.Server with timeouts, so a slow or idle
// client cannot hold connections forever. Its write timeout outlasts the
// per-request deadline of a Server with the default one; a server with a
// longer deadline must raise it (WriteTimeoutFor).
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// WriteTimeoutFor is the write timeout an http.Server needs for requests
// with the given deadline: the default 60 s, or the deadline plus time to
// write the answer, so a call that is still allowed to run is never cut
// off by the connection first.
func WriteTimeoutFor(deadline time.Duration) time.Duration {
	return max(60*time.Second, deadline+10*time.Second)
}

type httpFront struct {
	s     *Server
	inner http.Handler
	hosts mcpwire.Hosts
	auth  *identity.Authenticator
	// noDirect sends every request through mcp-go's transport, so tests
	// can compare the two paths.
	noDirect bool
}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg, ok := f.hosts.Check(r); !ok {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	if f.auth.IsMetadataPath(r.URL.Path) {
		f.auth.ServeMetadata(w, r)
		return
	}
	if r.URL.Path != EndpointPath {
		http.Error(w, "not found: the MCP endpoint is "+EndpointPath, http.StatusNotFound)
		return
	}
	id, err := f.auth.Authenticate(r)
	if err != nil {
		f.auth.Challenge(w, err)
		return
	}
	// The request is served on a context the connection cannot cancel: a
	// client that half-closes its socket after sending a complete request
	// (net/http then cancels r.Context()) still gets its answer, and its
	// write is committed. Each call has its own deadline (Server.run).
	r = r.WithContext(f.callContext(context.WithoutCancel(r.Context()), r.RemoteAddr, id))
	if r.Method != http.MethodPost {
		f.inner.ServeHTTP(w, r)
		return
	}
	if refuseHeaders(w, r) {
		return
	}
	body, ok := readBody(w, r, f.s.maxRequest)
	if !ok {
		return
	}
	if isJSON(r) {
		v, done := f.screen(w, r, body)
		if done || f.direct(w, r, v) {
			return
		}
		body = v.forward
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	f.inner.ServeHTTP(w, r)
}

// screen runs the pre-filter; done means the response has been written,
// otherwise v.forward is the message to serve.
func (f *httpFront) screen(w http.ResponseWriter, r *http.Request, body []byte) (v verdict, done bool) {
	v = f.s.screen(r.Context(), body)
	switch {
	case v.reply != nil:
		status := http.StatusOK
		if v.modern || mcpgo.IsModernProtocol(r.Header.Get(mcpgo.HeaderProtocolVersion)) {
			status = http.StatusBadRequest // the 2026-07-28 revision maps errors to statuses
		}
		writeJSON(w, status, v.reply)
		return v, true
	case v.forward == nil:
		w.WriteHeader(http.StatusAccepted) // a notification: accepted, never answered
		return v, true
	}
	renameHeader(r, v.renamed)
	return v, false
}

// direct serves a tools/call without mcp-go's Streamable HTTP transport,
// which per request allocates a session with its channels, starts a
// goroutine to forward notifications and parses the body twice more:
// waste for a stateless server whose tools never send anything but their
// one response. It takes only what the transport would pass straight
// through: a tools/call without _meta (so of a revision before 2026-07-28
// and asking for no progress), with no MCP-Protocol-Version header or a
// supported pre-2026-07-28 one. A plain call of a registered tool (see
// plainCall) is served here outright; any other goes to the MCP server's
// dispatch. Either way it answers as the transport does, 200 with the
// encoded JSON-RPC response (TestDirectToolCallsAnswerAsTheTransport);
// false means it left the request alone. A tool that ever sends
// notifications or requests of its own must not be served here.
func (f *httpFront) direct(w http.ResponseWriter, r *http.Request, v verdict) bool {
	if f.noDirect || (!v.direct && v.call == nil) {
		return false
	}
	if pv := r.Header.Get(mcpgo.HeaderProtocolVersion); pv != "" &&
		(mcpgo.IsModernProtocol(pv) || !slices.Contains(mcpgo.ValidProtocolVersions, pv)) {
		return false // the transport refuses it, or applies the 2026-07-28 rules
	}
	if v.call != nil {
		f.serveCall(w, r, v.call)
		return true
	}
	resp := f.s.mcp.HandleMessage(r.Context(), v.forward)
	if resp == nil {
		w.WriteHeader(http.StatusAccepted) // not for a request; as the transport does
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err := json.NewEncoder(w).Encode(resp); err != nil {
		f.s.log.Debug("writing a response failed", "err", err)
	}
	return true
}

// serveCall runs a plain tool call and writes the response mcp-go would
// write: the result encoded once (appendResponse), or for a failure of the
// server itself the -32603 error mcp-go gives a handler error.
func (f *httpFront) serveCall(w http.ResponseWriter, r *http.Request, c *toolCall) {
	res, err := f.s.run(r.Context(), c.tool, c.args, nil)
	buf := responseBufs.Get().(*[]byte)
	defer putResponseBuf(buf)
	if err != nil {
		*buf = append(append((*buf)[:0], errorReply(c.id, mcpgo.INTERNAL_ERROR, err.Error(), nil)...), '\n')
	} else {
		*buf = appendResponse((*buf)[:0], c.id, res)
	}
	// One shared, never modified value: Header().Set would allocate it
	// afresh for every response.
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(*buf); err != nil {
		f.s.log.Debug("writing a response failed", "err", err)
	}
}

var jsonContentType = []string{"application/json"}

// responseBufs recycles response buffers; one holds a typical answer.
var responseBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// putResponseBuf recycles buf unless a rare large answer grew it: the
// pool should not pin megabytes for the common small one.
func putResponseBuf(buf *[]byte) {
	if cap(*buf) <= 64<<10 {
		responseBufs.Put(buf)
	}
}

// renameHeader keeps the 2026-07-28 Mcp-Name header equal to the URI the
// filter rewrote; a header that did not match the original still does not
// match, so mcp-go refuses it as before.
func renameHeader(r *http.Request, renamed [2]string) {
	if renamed[0] == "" {
		return
	}
	if h, ok := mcpgo.DecodeHeaderValue(r.Header.Get(mcpgo.HeaderName)); ok && h == renamed[0] {
		r.Header.Set(mcpgo.HeaderName, renamed[1])
	}
}

// refuseHeaders answers a POST whose headers already say it cannot be
// served, with a message saying why: a compressed body (415; the body
// would otherwise be read as JSON and fail as a parse error), or an
// MCP-Protocol-Version this server does not speak (400 naming the ones it
// does; mcp-go would take a future date for the 2026-07-28 revision and
// complain about _meta). It reports whether it answered.
func refuseHeaders(w http.ResponseWriter, r *http.Request) bool {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		writeJSON(w, http.StatusUnsupportedMediaType, errorReply(nil, mcpgo.INVALID_REQUEST, fmt.Sprintf(
			"Content-Encoding %q is not supported: send the JSON-RPC body uncompressed", ce), nil))
		return true
	}
	if pv := r.Header.Get(mcpgo.HeaderProtocolVersion); pv != "" && !mcpgo.IsValidProtocolVersion(pv) {
		writeJSON(w, http.StatusBadRequest, errorReply(nil, mcpgo.INVALID_REQUEST, fmt.Sprintf(
			"%s %q is not a revision this server speaks; supported: %s", mcpgo.HeaderProtocolVersion, pv,
			strings.Join(mcpgo.ValidProtocolVersions, ", ")), nil))
		return true
	}
	return false
}

// readBody reads at most limit bytes; a larger body is answered with 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int) ([]byte, bool) {
	if r.ContentLength > int64(limit) {
		tooLarge(w, limit)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorReply(nil, mcpgo.PARSE_ERROR, "reading the request body failed: "+err.Error(), nil))
		return nil, false
	}
	if len(body) > limit {
		tooLarge(w, limit)
		return nil, false
	}
	return body, true
}

func tooLarge(w http.ResponseWriter, limit int) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	writeJSON(w, http.StatusRequestEntityTooLarge, errorReply(nil, mcpgo.INVALID_REQUEST,
		fmt.Sprintf("request body exceeds %d bytes; the operator raises the limit with ewp-mcp --max-request-bytes", limit), nil))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func isJSON(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return true // what clients send; ParseMediaType would allocate to say so
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}
