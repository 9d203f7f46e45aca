// Package console is the operator console of ewp-mcp: server-rendered
// pages (html/template, embedded CSS, SVG drawn on the server, no script)
// to see the evidence, the gate's decisions and the concept graph, and to
// approve or reject the decisions waiting for a human.
//
// It is served under BasePath beside /mcp and only for an operator: the
// operator token signs a browser in to a server-side session; every form
// carries a CSRF token bound to that session; Host and Origin are checked
// as for /mcp. The agent's ingest token is not an operator credential.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/edgepolicy"
)

// BasePath is where the console is served.
const BasePath = "/console/"

// Config configures New.
type Config struct {
	// Evidence is the evidence store (required).
	Evidence EvidenceSource
	// Log is the decision log; nil shows the evidence pages only and
	// disables the inbox. LogVerify, when set, walks its chain on demand.
	Log       audit.Log
	LogVerify LogVerifyFunc
	// Signer is the console's operator key (ewp-mcp --console-key): every
	// answer given here is signed with it, in the name "KEY/OPERATOR"
	// (the key's name, then who signed in, which the shared operator
	// token does not authenticate). Without it the console offers no
	// answer: the gate honours only signed approvals. Keep the key where
	// the agent cannot read it: on stdio the server, and so its files,
	// run as the agent's OS user.
	Signer *audit.Signer
	// ListNewest, when set, lists decisions newest first (After then
	// means "older than"), so the feed opens on the latest and pages back;
	// Presented lists the decisions that presented an approval, for the
	// approval trail. Both are optional (console/auditsource has them for
	// the SQLite log); audit.Log alone pages forward only.
	ListNewest func(ctx context.Context, f audit.Filter) ([]audit.Decision, error)
	Presented  func(ctx context.Context, approvalID string, limit int) ([]audit.Decision, error)
	// Graph is the concept graph (nil: no graph page); Policies are the
	// operator's edge policies, marked on the graph's APPLIES_TO edges.
	Graph    GraphFunc
	Policies *edgepolicy.Set
	// OperatorToken is the only credential the console accepts (required;
	// without one there is no console).
	OperatorToken string
	// Addr is the listener's host:port and AllowedHosts the extra names
	// accepted in Host and Origin, exactly as for /mcp.
	Addr         string
	AllowedHosts []string
	// TLS marks cookies Secure.
	TLS bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ApprovalMaxLifetime is the furthest ahead an approval's until may
	// be set (audit.Approval.CheckLifetime; audit.DefaultMaxLifetime when
	// zero), as the gate honours it (ewp-mcp --approval-max-lifetime).
	ApprovalMaxLifetime time.Duration
	// SessionTTL is how long a sign-in lasts (8 h when zero).
	SessionTTL time.Duration
	// HeadPoll is how often the background work looks at the evidence
	// store's head and the decision log (2 s when zero). The state summary
	// follows a moved head at once, and re-evaluates a proposition exactly
	// when the clock changes its warrant (a record's time, a STALE
	// crossing), so its counts are at most one poll old ("as of …").
	HeadPoll time.Duration
	// Logger gets the background work's errors (slog.Default when nil).
	Logger *slog.Logger
	// RequestTimeout bounds one page (DefaultRequestTimeout when zero):
	// a page whose stores have not answered by then is answered with an
	// error page saying so, and its store calls are given up.
	RequestTimeout time.Duration
}

// DefaultRequestTimeout is a page's deadline when Config gives none.
const DefaultRequestTimeout = 15 * time.Second

// ErrNoOperatorToken is New's refusal without an operator credential.
var ErrNoOperatorToken = errors.New("console: no operator token configured; set EWP_OPERATOR_TOKEN (or a token file) to serve the console, never the agent's ingest token")

//go:embed assets
var assets embed.FS

// Console is the console's http.Handler. Close stops its background work.
type Console struct {
	cfg      Config
	hosts    map[string]bool
	sessions *sessions
	throttle *throttle
	logins   *loginTokens
	pages    map[string]*template.Template
	static   http.Handler
	summary  *summary
	tail     *decisionTail

	verifyMu sync.Mutex
	verified map[string]verifyResult // "ledger", "log": the last result

	// life ends when Close is called: the background work and the chain
	// walks run on it, so none outlives the console.
	life context.Context
	stop context.CancelFunc
	done chan struct{}
	// walks are the chain walks running (runVerify); Close waits for them.
	walks sync.WaitGroup
}

// New returns the console, with its background state summary started.
func New(cfg Config) (*Console, error) {
	if cfg.OperatorToken == "" {
		return nil, ErrNoOperatorToken
	}
	if problem := OperatorTokenProblem(cfg.OperatorToken); problem != "" {
		return nil, errors.New("console: " + problem)
	}
	if cfg.Evidence == nil {
		return nil, errors.New("console: Config.Evidence is required (the evidence store to show)")
	}
	cfg = withDefaults(cfg)
	hosts, err := allowedHosts(cfg.Addr, cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(assets, "assets/static")
	c := &Console{
		cfg: cfg, hosts: hosts, pages: pages,
		sessions: &sessions{m: map[string]*session{}, ttl: cfg.SessionTTL, now: cfg.Now},
		throttle: &throttle{m: map[string]*failures{}, now: cfg.Now},
		logins:   newLoginTokens(cfg.Now),
		static:   http.StripPrefix(BasePath+"static/", http.FileServerFS(static)),
		summary:  newSummary(cfg.Evidence, cfg.Now),
		tail:     newDecisionTail(cfg.Log),
		verified: map[string]verifyResult{},
		done:     make(chan struct{}),
	}
	ctx, stop := context.WithCancel(context.Background())
	c.life, c.stop = ctx, stop
	go c.background(ctx)
	return c, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ApprovalMaxLifetime <= 0 {
		cfg.ApprovalMaxLifetime = audit.DefaultMaxLifetime
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 8 * time.Hour
	}
	if cfg.HeadPoll <= 0 {
		cfg.HeadPoll = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	return cfg
}

// Close stops the background work and any chain walk an operator
// started, and waits for them.
func (c *Console) Close() error {
	c.stop()
	<-c.done
	c.walks.Wait()
	return nil
}

// Ready blocks until the state summary has been computed and the
// decision log read once (or ctx ends); pages served before show that the
// summary is still being computed and the decisions read so far.
func (c *Console) Ready(ctx context.Context) error {
	for _, ready := range []chan struct{}{c.summary.ready, c.tail.ready} {
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// background follows the evidence store's head and the decision log, and
// re-evaluates the states the clock has moved.
func (c *Console) background(ctx context.Context) {
	defer close(c.done)
	poll := time.NewTicker(c.cfg.HeadPoll)
	defer poll.Stop()
	for {
		if err := c.summary.refresh(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("console: state summary", "err", err)
		}
		if err := c.tail.follow(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("console: decision log", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
	}
}

// handler serves one signed-in page.
type handler func(w http.ResponseWriter, r *http.Request, s *session)

type route struct {
	post bool // POST only (otherwise GET and HEAD only)
	h    handler
}

func (c *Console) routes() map[string]route {
	return map[string]route{
		"":             {h: c.overview},
		"propositions": {h: c.propositions},
		"proposition":  {h: c.proposition},
		"decisions":    {h: c.decisions},
		"decision":     {h: c.decision},
		"inbox":        {h: c.inbox},
		"graph":        {h: c.graph},
		"approve":      {post: true, h: c.approve},
		"reject-stale": {post: true, h: c.rejectStale},
		"verify":       {post: true, h: c.verify},
		"logout":       {post: true, h: c.logout},
	}
}

// ServeHTTP checks Host/Origin, then the session and, for a POST, its
// CSRF token, before any page runs.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w)
	if msg, ok := c.hostOK(r); !ok {
		c.errorPage(w, r, http.StatusForbidden, "Forbidden", msg)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	name, ok := strings.CutPrefix(r.URL.Path, BasePath)
	if !ok {
		http.Redirect(w, r, BasePath, http.StatusMovedPermanently)
		return
	}
	switch {
	case strings.HasPrefix(name, "static/"):
		c.static.ServeHTTP(w, r)
		return
	case name == "login":
		c.withDeadline(w, r, c.login)
		return
	}
	rt, known := c.routes()[name]
	if !known {
		c.errorPage(w, r, http.StatusNotFound, "Not found", "There is no console page "+r.URL.Path+".")
		return
	}
	if !methodOK(rt, r.Method) {
		w.Header().Set("Allow", map[bool]string{true: "POST", false: "GET, HEAD"}[rt.post])
		c.errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", r.Method+" is not accepted here.")
		return
	}
	s := c.sessionOf(r)
	if s == nil {
		if r.Method == http.MethodPost {
			c.errorPage(w, r, http.StatusUnauthorized, "Signed out", "Your session ended: sign in again, then repeat the action.")
			return
		}
		http.Redirect(w, r, BasePath+"login", http.StatusSeeOther)
		return
	}
	if rt.post && !equalSecret(r.PostFormValue(csrfField), s.csrf) {
		c.errorPage(w, r, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or is not this session's: reload the page and submit again.")
		return
	}
	c.withDeadline(w, r, func(w http.ResponseWriter, r *http.Request) { rt.h(w, r, s) })
}

func methodOK(rt route, m string) bool {
	if rt.post {
		return m == http.MethodPost
	}
	return m == http.MethodGet || m == http.MethodHead
}

// secureHeaders: nothing but this origin's stylesheet and images, never in
// a frame, never cached (pages show live state and carry CSRF tokens).
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer Chromium sends
	// "Origin: null" with the console's own form posts, which the Origin
	// check must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}
