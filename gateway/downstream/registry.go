// Package downstream connects ewp-gateway to the MCP servers its config
// names, over stdio or Streamable HTTP with mcp-go's client, and keeps a
// registry of their tools under the names the agent sees, SERVER__TOOL.
//
// Each server runs on its own: one that crashes, hangs or breaks the
// protocol gives its callers a named error (EWP_DOWNSTREAM_UNAVAILABLE,
// _TIMEOUT, _PROTOCOL) and is restarted with exponential backoff while
// the others keep serving. A tool is listed and callable only while its
// definition's sha256 matches the one the operator pinned (see Pin);
// otherwise it is withheld and its calls refused (EWP_REFUSE_TOOL_CHANGED,
// EWP_REFUSE_TOOL_UNPINNED).
//
// Limits: a message from a server is at most Options.MaxLineBytes (4 MiB);
// 16 non-JSON lines on a stdio server's stdout are forgiven, not more; a
// server lists at most MaxToolsPerServer tools in at most 100 pages; a
// stderr line is logged up to 4 KiB, 200 lines a second; a call, and a
// write to a stdio server's stdin, last at most the server's timeout; the
// pins file is read up to MaxPinsBytes.
package downstream

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/mark3labs/mcp-go/mcp"
)

// Separator joins a server's name and its tool's: SERVER__TOOL. Server
// names never hold it (the config's schema), so the first one splits.
const Separator = "__"

// Options configure a Registry.
type Options struct {
	Servers         []config.Server
	PinsPath        string // the pins file (created on the first pin)
	PinOnFirstSight bool
	Log             *slog.Logger // default slog.Default()
	// OnChange is told of a definition that differs from its pin, a tool
	// never pinned, and a pin made on first sight, once per definition
	// seen (so the gateway can record it in the decision log).
	OnChange func(Change)
	// OnListChanged is called when the tools listed (pinned and current)
	// changed, to send notifications/tools/list_changed.
	OnListChanged func()
	// OnNotification receives a server's other notifications (resources
	// or prompts list_changed, resources/updated, log messages), for the
	// gateway to pass on or drop. Like OnChange it runs on the server's
	// reading goroutine and must return quickly.
	OnNotification func(server string, n mcp.JSONRPCNotification)
	MaxLineBytes   int           // default DefaultMaxLineBytes
	PinsPoll       time.Duration // how often the pins file is checked for another process's pins; default 1s
	Now            func() time.Time
}

// FromConfig is the Options a gateway config asks for.
func FromConfig(c *config.Config) Options {
	return Options{Servers: c.Servers, PinsPath: c.Pins, PinOnFirstSight: c.PinOnFirstSight}
}

// Tool is one downstream tool as the registry knows it.
type Tool struct {
	Name       string   // SERVER__TOOL, as the agent sees it
	Server     string   // the config's server name
	Definition mcp.Tool // what the server defined (its own name), reduced to what the pin covers
	SHA256     string   // of Definition's canonical JSON (DefinitionSHA256)
	Pinned     string   // the sha256 pinned, "" when none
	State      PinState
}

// Listed reports whether the agent may see and call the tool.
func (t Tool) Listed() bool { return t.State == Pinned }

// ChangeKind says what a Change is.
type ChangeKind string

const (
	ToolChanged   ChangeKind = "changed"         // the definition differs from its pin: withheld
	ToolUnpinned  ChangeKind = "unpinned"        // a tool never pinned: withheld
	ToolFirstSeen ChangeKind = "pinned_on_sight" // pinned now, on first sight
)

// Change is a definition seen that the pins did not already allow.
type Change struct {
	Kind   ChangeKind
	Tool   Tool
	Was    string // the sha256 pinned before ("" for unpinned and first sight)
	SeenAt time.Time
}

// Registry is the gateway's view of every downstream server and tool.
type Registry struct {
	opt     Options
	log     *slog.Logger
	maxLine int
	pins    *pins
	conns   map[string]*conn
	seq     atomic.Int64
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu       sync.RWMutex
	tools    map[string]Tool   // by SERVER__TOOL
	reported map[string]string // SERVER__TOOL → the sha256 last told to OnChange
}

// New loads the pins and starts every server in the background. It fails
// only on the pins file: a server that cannot start is retried with
// backoff, and its callers are told so.
func New(opt Options) (*Registry, error) {
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	if opt.MaxLineBytes <= 0 {
		opt.MaxLineBytes = DefaultMaxLineBytes
	}
	if opt.PinsPoll <= 0 {
		opt.PinsPoll = time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	p, err := loadPins(opt.PinsPath)
	if err != nil {
		return nil, err
	}
	r := &Registry{opt: opt, log: opt.Log, maxLine: opt.MaxLineBytes, pins: p, conns: map[string]*conn{},
		tools: map[string]Tool{}, reported: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	for _, s := range opt.Servers {
		if _, dup := r.conns[s.Name]; dup {
			cancel()
			return nil, fmt.Errorf("downstream: server %q is named twice", s.Name)
		}
		c := &conn{srv: s, reg: r, log: opt.Log, firstDone: make(chan struct{}), relist: make(chan struct{}, 1)}
		r.conns[s.Name] = c
	}
	for _, c := range r.conns {
		r.wg.Add(1)
		go func() { defer r.wg.Done(); c.run(ctx) }()
	}
	r.wg.Add(1)
	go func() { defer r.wg.Done(); r.watchPins(ctx) }()
	return r, nil
}

// Ready waits until every server has been tried once (connected, or
// failed its first attempt), or ctx ends.
func (r *Registry) Ready(ctx context.Context) error {
	for _, c := range r.conns {
		select {
		case <-c.firstDone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// closeWait bounds Close's wait for the servers' processes: closed
// stdin, then SIGTERM a second later, then SIGKILL a second after that.
const closeWait = 3 * time.Second

// Close stops every server and waits for their processes to exit (a few
// seconds at most for one that ignores its closed stdin and SIGTERM).
func (r *Registry) Close() error {
	r.cancel()
	r.wg.Wait()
	deadline := time.After(closeWait)
	for _, c := range r.conns {
		c.mu.Lock()
		s := c.last
		c.mu.Unlock()
		if s == nil {
			continue
		}
		select {
		case <-s.gone:
		case <-deadline:
			return errors.New("downstream: a server's process did not exit in time after SIGKILL")
		}
	}
	return nil
}

// Tools is every tool of every server, sorted by name, listed or not.
// A server that is restarting keeps its last listing here.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Tool is the tool named name (SERVER__TOOL), if any server lists it.
func (r *Registry) Tool(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Call forwards tools/call of name (SERVER__TOOL) with args (a JSON
// object, or nil for none) to its server, with the caller's ctx (its end
// cancels the call downstream) within the server's timeout. progress, if
// not nil, receives the server's progress notifications for the call. A
// tool error is a result (IsError); an *Error is a call that failed or
// was refused.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage, progress ProgressFunc) (*mcp.CallToolResult, error) {
	t, ok := r.Tool(name)
	if !ok {
		return nil, errorf(CodeUnknownTool, "", name, nil, "no downstream server lists a tool named %q", termtext.Escape(name))
	}
	switch t.State {
	case Changed:
		return nil, errorf(CodeToolChanged, t.Server, name, nil,
			"the definition of %s changed since the operator pinned it; it is withheld until they pin it again (ewp-gateway pin)", name)
	case Unpinned:
		return nil, errorf(CodeToolUnpinned, t.Server, name, nil,
			"%s has not been pinned by the operator; it is withheld until they pin it (ewp-gateway pin)", name)
	}
	return r.conns[t.Server].call(ctx, t.Definition.Name, name, args, progress)
}

func (r *Registry) token() string { return "ewp-" + strconv.FormatInt(r.seq.Add(1), 10) }

// toolName is what MCP allows in a tool's name; a downstream tool named
// otherwise is not offered (the agent could not call it, or it would
// hide text in a listing).
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// update takes a server's new listing: it judges each tool against the
// pins (pinning on first sight if asked), replaces the server's tools,
// and reports what changed.
func (r *Registry) update(server string, listing []mcp.Tool) {
	now := r.opt.Now()
	seen := make([]Tool, 0, len(listing))
	for _, d := range listing {
		if !toolName.MatchString(d.Name) {
			r.log.Warn("downstream tool not offered: its name is not 1-128 of A-Z a-z 0-9 _ . -", "server", server, "tool", termtext.Escape(d.Name))
			continue
		}
		def := definition(d)
		sum, err := DefinitionSHA256(def)
		if err != nil {
			r.log.Warn("downstream tool not offered: its definition does not encode", "server", server, "tool", d.Name, "error", err)
			continue
		}
		seen = append(seen, Tool{Name: server + Separator + d.Name, Server: server, Definition: def, SHA256: sum})
	}
	first := map[string]string{}
	for i := range seen {
		t := &seen[i]
		t.Pinned, _ = r.pins.get(t.Name)
		if t.Pinned == "" && r.opt.PinOnFirstSight {
			first[t.Name] = t.SHA256
		}
	}
	if len(first) > 0 {
		if err := r.pins.set(first, now); err != nil {
			r.log.Error("could not pin on first sight; the tools stay withheld", "server", server, "error", err)
			first = nil
		}
	}
	var changes []Change
	r.mu.Lock()
	before := r.listedSum(server)
	for name, t := range r.tools {
		if t.Server == server {
			delete(r.tools, name)
		}
	}
	for _, t := range seen {
		_, firstSight := first[t.Name]
		if firstSight {
			t.Pinned = t.SHA256
		}
		t.State = state(t)
		if firstSight {
			changes = append(changes, Change{Kind: ToolFirstSeen, Tool: t, SeenAt: now})
		}
		if ch, ok := r.change(t, now); ok {
			changes = append(changes, ch)
		}
		r.tools[t.Name] = t
	}
	moved := before != r.listedSum(server)
	r.mu.Unlock()
	r.announce(changes, moved)
}

// listedSum sums up server's listed tools (names and definitions), to
// tell whether a new listing changes what the agent sees; r.mu is held.
func (r *Registry) listedSum(server string) string {
	var names []string
	for _, t := range r.tools {
		if t.Server == server && t.Listed() {
			names = append(names, t.Name+"="+t.SHA256)
		}
	}
	slices.Sort(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\n")))
	return string(sum[:])
}

func state(t Tool) PinState {
	switch t.Pinned {
	case "":
		return Unpinned
	case t.SHA256:
		return Pinned
	}
	return Changed
}

// change is the Change to report for t, once per definition seen; r.mu
// is held.
func (r *Registry) change(t Tool, now time.Time) (Change, bool) {
	if t.State == Pinned {
		delete(r.reported, t.Name)
		return Change{}, false
	}
	if r.reported[t.Name] == t.SHA256 {
		return Change{}, false
	}
	r.reported[t.Name] = t.SHA256
	kind := ToolUnpinned
	if t.State == Changed {
		kind = ToolChanged
	}
	return Change{Kind: kind, Tool: t, Was: t.Pinned, SeenAt: now}, true
}

func (r *Registry) announce(changes []Change, moved bool) {
	for _, ch := range changes {
		level := slog.LevelWarn
		if ch.Kind == ToolFirstSeen {
			level = slog.LevelInfo
		}
		r.log.Log(context.Background(), level, "downstream tool "+string(ch.Kind), "tool", ch.Tool.Name, "sha256", ch.Tool.SHA256, "pinned", ch.Was)
		if r.opt.OnChange != nil {
			r.opt.OnChange(ch)
		}
	}
	if moved && r.opt.OnListChanged != nil {
		r.opt.OnListChanged()
	}
}

// Pin pins the current definitions of the tools named (SERVER__TOOL), or
// of every tool listed now when none are named, and writes the pins file.
// It returns the tools pinned, with the sha256 each had before in Pinned.
func (r *Registry) Pin(names ...string) ([]Tool, error) {
	all := r.Tools()
	var picked []Tool
	if len(names) == 0 {
		picked = all
	}
	for _, n := range names {
		t, ok := r.Tool(n)
		if !ok {
			return nil, errorf(CodeUnknownTool, "", n, nil, "no downstream server lists a tool named %q", termtext.Escape(n))
		}
		picked = append(picked, t)
	}
	sums := make(map[string]string, len(picked))
	for _, t := range picked {
		sums[t.Name] = t.SHA256
	}
	if err := r.pins.set(sums, r.opt.Now()); err != nil {
		return nil, err
	}
	r.rejudge()
	return picked, nil
}

// rejudge applies the pins to every server's last listing again.
func (r *Registry) rejudge() {
	for name, c := range r.conns {
		c.umu.Lock()
		if l := c.tools(); l != nil {
			r.update(name, l)
		}
		c.umu.Unlock()
	}
}

// watchPins reloads the pins when another process (ewp-gateway pin)
// rewrote the file, so a running gateway honours them within PinsPoll.
func (r *Registry) watchPins(ctx context.Context) {
	last := modTime(r.opt.PinsPath)
	t := time.NewTicker(r.opt.PinsPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m := modTime(r.opt.PinsPath)
		if m.Equal(last) {
			continue
		}
		last = m
		if err := r.pins.reload(); err != nil {
			r.log.Error("pins file changed but cannot be read; keeping the pins held", "pins", r.opt.PinsPath, "error", err)
			continue
		}
		r.rejudge()
	}
}

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// ServerStatus is one server's state, for the gateway's log and health.
type ServerStatus struct {
	Name      string
	Up        bool
	Err       error // why it is down
	Tools     int
	Resources bool
	Prompts   bool
}

// Servers is the state of every server, sorted by name.
func (r *Registry) Servers() []ServerStatus {
	out := make([]ServerStatus, 0, len(r.conns))
	for _, c := range r.conns {
		c.mu.Lock()
		out = append(out, ServerStatus{Name: c.srv.Name, Up: c.sess != nil, Err: c.err, Tools: len(c.listing),
			Resources: c.srv.Resources, Prompts: c.srv.Prompts})
		c.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b ServerStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func safeText(err error) string {
	if err == nil {
		return ""
	}
	return termtext.Escape(err.Error())
}
