package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/termtext"
)

// page is what every template gets: the layout's fields and the page's own
// data.
type page struct {
	Title    string
	Nav      string // the active navigation entry
	Operator string
	CSRF     string
	Message  string // an error or notice shown at the top
	Pending  string // "(N) " before the title of a signed-in page (pendingTitle)
	Notice   string
	Data     any
}

// pageNames are the templates under assets/templates, each rendered inside
// layout.html.
var pageNames = []string{"login", "error", "overview", "propositions", "proposition", "decisions", "decision", "inbox", "graph"}

func parsePages() (map[string]*template.Template, error) {
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets,
			"assets/templates/layout.html", "assets/templates/answer.html", path.Join("assets/templates", name+".html"))
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		out[name] = t
	}
	if _, err := fs.Stat(assets, "assets/static/console.css"); err != nil {
		return nil, fmt.Errorf("console: stylesheet missing from the build: %w", err)
	}
	return out, nil
}

// render executes a page into a buffer first, so a template error becomes
// a 500 instead of half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	if p.Operator != "" {
		p.Pending = c.pendingTitle(r.Context())
	}
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, p); err != nil {
		c.cfg.Logger.Error("console: render", "page", name, "err", err)
		http.Error(w, "console: the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes()) //nolint:errcheck // the client went away
	}
}

func (c *Console) errorPage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	p := &page{Title: title, Message: msg}
	if s := c.sessionOf(r); s != nil {
		p.Operator, p.CSRF = s.operator, s.csrf
	}
	c.render(w, r, status, "error", p)
}

// signedIn fills the layout's fields of a signed-in page.
func signedIn(s *session, nav, title string, data any) *page {
	return &page{Title: title, Nav: nav, Operator: s.operator, CSRF: s.csrf, Data: data}
}

var funcs = template.FuncMap{
	"when":  when,
	"short": short,
	"badge": badge,
	"join":  strings.Join,
	// txt makes an agent's text visible as it is (controls, bidi
	// overrides as escapes) before html/template escapes it for HTML.
	"txt":       termtext.Escape,
	"count":     countFunc,
	"rationale": wordsFunc,
	"add":       func(a, b int) int { return a + b },
	"deref": func(b *bool) string {
		if b == nil {
			return "not said"
		}
		return map[bool]string{true: "yes", false: "no"}[*b]
	},
	"arguments": func(d any) string { // what the operator approves, not only its hash
		switch x := d.(type) {
		case *audit.Decision:
			return x.ArgumentsText()
		case audit.Decision:
			return x.ArgumentsText()
		case inboxRow:
			return x.ArgumentsText()
		}
		return ""
	},
	"safeSVG":  func(s string) template.HTML { return template.HTML(s) }, //nolint:gosec // built by svg.go, every text escaped
	"isoLocal": func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") },
	"dict": func(d any, p *page, tomorrow time.Time) answerCtx {
		return answerCtx{D: d, CSRF: p.CSRF, Tomorrow: tomorrow}
	},
}

// answerCtx is what the approve/reject forms need: the decision, the
// session's CSRF token and a default expiry.
type answerCtx struct {
	D        any
	CSRF     string
	Tomorrow time.Time
}

// when formats a time for people: UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// short abbreviates a long id or hash for a table cell (the full value is
// on the linked page).
func short(s string) string {
	if len(s) <= 16 {
		return s
	}
	return s[:12] + "…"
}

// badge is the CSS class of an axis value, an outcome or a layer verdict
// (audit.Outcome, audit.Verdict: string types, which fmt prints as their
// text).
func badge(v any) string {
	return "badge b-" + strings.ToLower(strings.ReplaceAll(fmt.Sprint(v), "_", "-"))
}
