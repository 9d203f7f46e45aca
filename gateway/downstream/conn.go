package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ewp-go/ewp/gateway/config"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Limits on one server's listing: a server past them is broken
// (EWP_DOWNSTREAM_PROTOCOL) and restarted.
const (
	MaxToolsPerServer = 1000
	maxListPages      = 100
)

// The probe sent after a call timed out waits the server's timeout, at
// least probeFloor: a server that does not answer it either is hung, and
// is restarted. A slow tool is not a hung server.
const probeFloor = time.Second

// Progress is one notifications/progress from a server for a call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when the server did not say
	Message  string
}

// ProgressFunc receives a call's progress. It runs on the connection's
// reading goroutine: it must return quickly (send a notification, not
// wait for an answer).
type ProgressFunc func(Progress)

// conn is one configured server: its current session (nil while down),
// its last listing, and the goroutine that (re)starts it.
type conn struct {
	srv  config.Server
	reg  *Registry
	log  *slog.Logger
	mu   sync.Mutex
	sess *session
	last *session  // the latest session, live or not (Close waits for it to be gone)
	err  error     // why it is down
	next time.Time // when it is tried again
	// listing is the last tools/list, kept while the server restarts so
	// its calls are answered UNAVAILABLE rather than "no such tool".
	listing []mcp.Tool
	// umu orders the registry's updates of this server's tools: a new
	// listing and a pins reload never apply an older listing last.
	umu       sync.Mutex
	firstDone chan struct{}
	firstOnce sync.Once
	relist    chan struct{}
	progress  sync.Map // token string → ProgressFunc
}

func (c *conn) run(ctx context.Context) {
	delay := c.srv.Restart.Min
	for ctx.Err() == nil {
		s, err := c.open(ctx)
		if err == nil {
			c.serve(ctx, s)
			err = s.why()
			if time.Since(s.started) >= c.srv.Restart.Max {
				delay = c.srv.Restart.Min // it served a good while: this is a new run of trouble
			}
		}
		c.down(err, delay)
		c.firstOnce.Do(func() { close(c.firstDone) })
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("downstream unavailable; restarting after a backoff", "server", c.srv.Name, "error", safeText(err), "backoff", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, c.srv.Restart.Max)
	}
}

// serve holds s as the current session until it ends, re-listing the
// tools when the server says they changed.
func (c *conn) serve(ctx context.Context, s *session) {
	c.mu.Lock()
	c.sess, c.err = s, nil
	c.mu.Unlock()
	c.firstOnce.Do(func() { close(c.firstDone) })
	c.log.Info("downstream ready", "server", c.srv.Name, "tools", len(c.tools()))
	for {
		select {
		case <-ctx.Done():
			s.end(errors.New("the gateway is stopping"))
			return
		case <-s.dead:
			return
		case <-c.relist:
			if err := c.list(ctx, s); err != nil {
				s.end(err)
			}
		}
	}
}

func (c *conn) down(err error, delay time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sess, c.err, c.next = nil, err, time.Now().Add(delay)
}

// session is the live session, or nil.
func (c *conn) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func (c *conn) tools() []mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listing
}

// open starts the server, initializes it and lists its tools, each step
// within the server's timeout.
func (c *conn) open(ctx context.Context) (*session, error) {
	var s *session
	var err error
	if c.srv.Stdio() {
		s, err = startStdio(ctx, c.srv, c.reg.maxLine, c.log)
	} else {
		s, err = startHTTP(ctx, c.srv, c.reg.maxLine)
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.last = s
	c.mu.Unlock()
	s.cli.OnNotification(c.notified)
	ictx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "ewp-gateway", Version: "1"}
	if _, err := s.cli.Initialize(ictx, init); err != nil {
		s.end(err)
		return nil, c.failure(s, ictx, "initialize", err)
	}
	if err := c.list(ctx, s); err != nil {
		s.end(err)
		return nil, err
	}
	return s, nil
}

// list asks for every page of the server's tools, bounded, and hands the
// listing to the registry.
func (c *conn) list(ctx context.Context, s *session) error {
	lctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	var tools []mcp.Tool
	req := mcp.ListToolsRequest{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return &protocolError{fmt.Sprintf("tools/list has more than %d pages", maxListPages)}
		}
		res, err := s.cli.ListToolsByPage(lctx, req)
		if err != nil {
			return c.failure(s, lctx, "tools/list", err)
		}
		tools = append(tools, res.Tools...)
		if len(tools) > MaxToolsPerServer {
			return &protocolError{fmt.Sprintf("more than %d tools", MaxToolsPerServer)}
		}
		if res.NextCursor == "" || res.NextCursor == req.Params.Cursor {
			break
		}
		req.Params.Cursor = res.NextCursor
	}
	c.umu.Lock()
	defer c.umu.Unlock()
	c.mu.Lock()
	c.listing = tools
	c.mu.Unlock()
	c.reg.update(c.srv.Name, tools)
	return nil
}

func (c *conn) notified(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		c.progressed(n.Params.AdditionalFields)
	case mcp.MethodNotificationToolsListChanged:
		select {
		case c.relist <- struct{}{}:
		default:
		}
	default:
		if f := c.reg.opt.OnNotification; f != nil {
			f(c.srv.Name, n)
		}
	}
}

func (c *conn) progressed(f map[string]any) {
	token, _ := f["progressToken"].(string)
	fn, ok := c.progress.Load(token)
	if !ok {
		return
	}
	p := Progress{}
	p.Progress, _ = f["progress"].(float64)
	p.Total, _ = f["total"].(float64)
	p.Message, _ = f["message"].(string)
	fn.(ProgressFunc)(p)
}

// call forwards one tools/call within the server's timeout.
func (c *conn) call(ctx context.Context, tool, name string, args json.RawMessage, progress ProgressFunc) (*mcp.CallToolResult, error) {
	s := c.session()
	if s == nil {
		return nil, c.unavailable(name)
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if len(args) > 0 {
		req.Params.Arguments = args
	}
	if progress != nil {
		token := c.reg.token()
		c.progress.Store(token, progress)
		defer c.progress.Delete(token)
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	res, err := s.cli.CallTool(cctx, req)
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, errorf(CodeCancelled, c.srv.Name, name, ctx.Err(), "the call to %s was cancelled by its caller", name)
	}
	e := c.failure(s, cctx, "tools/call", err)
	e.Tool = name
	return nil, e
}

// failure turns a request's error into a named one, and ends the session
// when the server is at fault (a hang is checked with a ping first).
func (c *conn) failure(s *session, ctx context.Context, what string, err error) *Error {
	name := c.srv.Name
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !s.ended() {
		go c.probe(s)
		return errorf(CodeTimeout, name, "", nil, "server %s did not answer %s within %s", name, what, c.srv.Timeout)
	}
	var te *transport.Error
	if !s.ended() && errors.As(err, &te) {
		// The connection broke; for stdio the process's end is usually
		// being noticed this very moment: let it give the reason.
		select {
		case <-s.dead:
		case <-time.After(100 * time.Millisecond):
			s.end(err)
		}
	}
	if s.ended() {
		cause := s.why()
		if isProtocol(cause) {
			return errorf(CodeProtocol, name, "", cause, "server %s broke the protocol during %s and is being restarted", name, what)
		}
		return errorf(CodeUnavailable, name, "", cause, "server %s failed during %s and is being restarted", name, what)
	}
	return errorf(CodeError, name, "", boundedErr(err), "server %s answered %s with an error", name, what)
}

// probe asks a server for its first page of tools after a call timed
// out; one that does not answer within its timeout (at least probeFloor) is taken for hung and
// restarted. (Not ping: protocol 2026-07-28 removed it, and mcp-go's
// Ping then sends nothing.)
func (c *conn) probe(s *session) {
	if !s.probing.CompareAndSwap(false, true) {
		return // one probe at a time: many calls may time out together
	}
	defer func() {
		s.probed.Add(1)
		s.probing.Store(false)
	}()
	wait := max(probeFloor, c.srv.Timeout)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := s.cli.ListToolsByPage(ctx, mcp.ListToolsRequest{}); err != nil && !s.ended() {
		c.log.Warn("downstream did not answer after a call timed out; restarting it", "server", c.srv.Name)
		s.end(fmt.Errorf("the server stopped answering (a call timed out and tools/list got no answer within %s)", wait))
	}
}

func (c *conn) unavailable(name string) *Error {
	c.mu.Lock()
	err, next := c.err, c.next
	c.mu.Unlock()
	code := CodeUnavailable
	if isProtocol(err) {
		code = CodeProtocol
	}
	wait := time.Until(next).Round(time.Millisecond)
	if err == nil {
		return errorf(code, c.srv.Name, name, nil, "server %s is starting", c.srv.Name)
	}
	return errorf(code, c.srv.Name, name, err, "server %s is down; next attempt in %s", c.srv.Name, max(wait, 0))
}

// maxErrorText bounds the text of a server's error passed on.
const maxErrorText = 1024

func boundedErr(err error) error {
	s := err.Error()
	if len(s) <= maxErrorText {
		return err
	}
	return errors.New(s[:maxErrorText] + "…")
}
