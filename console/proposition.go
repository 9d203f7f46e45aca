package console

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// chartSnapshots bounds how many of the newest snapshots the chart reads.
const chartSnapshots = 50

type propositionData struct {
	ID       string
	History  []SnapshotInfo
	Shown    *warrant.View // the snapshot shown (latest unless ?view=)
	Warrant  *warrant.WarrantView
	Now      time.Time
	A, B     string
	Diff     []diffLine
	Chart    string // inline SVG
	Segments []segmentRow
	Err      string
	// Freshness says the freshness policy and where the warrant stands
	// against it, in words.
	Freshness string
	// Decisions are the newest decisions made on the proposition (at most
	// propDecisions; DecisionsMore when there are older ones).
	HasLog        bool
	Decisions     []audit.Decision
	DecisionsMore bool
	DecisionsErr  string
}

// propDecisions bounds the decisions a proposition page lists; the
// decisions page, filtered on the proposition, has them all.
const propDecisions = 10

type segmentRow struct {
	From, To time.Time
	ViewID   string
	Axes     warrant.Axes
	StaleAt  time.Time
}

func (c *Console) proposition(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	q := r.URL.Query()
	id := q.Get("id")
	hist, err := c.cfg.Evidence.History(ctx, id)
	if err != nil || len(hist) == 0 {
		msg := "No stored snapshot for proposition " + strconvQuote(id) + "."
		if err != nil {
			msg = err.Error()
		}
		c.errorPage(w, r, http.StatusNotFound, "No such proposition", msg)
		return
	}
	now := c.cfg.Now()
	d := propositionData{ID: id, History: hist, Now: now}
	shown := hist[len(hist)-1].ViewID
	if v := q.Get("view"); v != "" {
		shown = v
	}
	if d.Shown, err = c.cfg.Evidence.Get(ctx, id, shown); err != nil {
		c.errorPage(w, r, http.StatusNotFound, "No such snapshot", err.Error())
		return
	}
	if d.Warrant, err = evalAt(d.Shown, instantOf(now)); err != nil {
		d.Err = err.Error()
	} else {
		d.Freshness = freshnessText(d.Shown, d.Warrant, now)
	}
	c.decisionsOn(r, &d)
	d.A, d.B = q.Get("a"), q.Get("b")
	if d.A == "" && d.B == "" && len(hist) > 1 {
		d.A, d.B = hist[len(hist)-2].ViewID, hist[len(hist)-1].ViewID
	}
	if d.A != "" && d.B != "" {
		d.Diff, err = c.diffSnapshots(r, id, d.A, d.B)
		if err != nil {
			d.Err = err.Error()
		}
	}
	if err := c.chart(r, &d); err != nil {
		d.Err = err.Error()
	}
	c.render(w, r, http.StatusOK, "proposition", signedIn(s, "propositions", "Proposition "+id, d))
}

// decisionsOn lists the newest decisions made on the proposition: from
// the background tail, which indexes them as it reads the log (a filter
// on the proposition reads every decision body in the SQLite log, too
// slow for every page view), else from the log itself. The newest-first
// lister reads them directly; a log that pages forward only is read page
// by page, keeping the last propDecisions, and stops after propScan
// decisions.
func (c *Console) decisionsOn(r *http.Request, d *propositionData) {
	if c.cfg.Log == nil {
		return
	}
	d.HasLog = true
	f := audit.Filter{PropositionID: d.ID, Limit: propDecisions + 1}
	rows, ok := c.tail.decisionsOn(d.ID)
	var err error
	switch {
	case ok:
	case c.cfg.ListNewest != nil:
		rows, err = c.cfg.ListNewest(r.Context(), f)
	default:
		rows, err = lastDecisions(r, c.cfg.Log, f)
		slices.Reverse(rows)
	}
	if err != nil {
		d.DecisionsErr = "the decisions on it could not be read: " + err.Error()
		return
	}
	d.DecisionsMore = len(rows) > propDecisions
	d.Decisions = rows[:min(len(rows), propDecisions)]
}

// propScan bounds how many decisions a forward-only log is read for.
const propScan = 10_000

// lastDecisions reads a forward-only log's decisions matching f, oldest
// first, and keeps the last f.Limit of them.
func lastDecisions(r *http.Request, l audit.Log, f audit.Filter) ([]audit.Decision, error) {
	keep := f.Limit
	f.Limit = pageSize
	var out []audit.Decision
	for read := 0; read < propScan; {
		page, err := l.List(r.Context(), f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		out = out[max(0, len(out)-keep):]
		read += len(page)
		if len(page) < f.Limit {
			break
		}
		f.After = page[len(page)-1].ID
	}
	return out, nil
}

// chart evaluates the newest snapshots over time and draws the bands.
func (c *Console) chart(r *http.Request, d *propositionData) error {
	hist := d.History[max(0, len(d.History)-chartSnapshots):]
	views := make([]datedView, 0, len(hist))
	for _, h := range hist {
		v, err := c.cfg.Evidence.Get(r.Context(), d.ID, h.ViewID)
		if err != nil {
			return err
		}
		views = append(views, datedView{Info: h, View: v})
	}
	segs, err := timeline(views, instantOf(d.Now))
	if err != nil {
		return err
	}
	for _, sg := range segs {
		row := segmentRow{From: timeOf(sg.From), To: timeOf(sg.To), ViewID: sg.ViewID, Axes: sg.Axes}
		if sg.StaleAt != 0 {
			row.StaleAt = timeOf(sg.StaleAt)
		}
		d.Segments = append(d.Segments, row)
	}
	d.Chart = warrantChart(segs, hist, instantOf(d.Now))
	return nil
}

// diffLine is one difference between two snapshots.
type diffLine struct {
	Kind   string // "added" | "removed" | "changed"
	What   string // record kind or field
	ID     string
	Detail string
}

func (c *Console) diffSnapshots(r *http.Request, id, a, b string) ([]diffLine, error) {
	va, err := c.cfg.Evidence.Get(r.Context(), id, a)
	if err != nil {
		return nil, err
	}
	vb, err := c.cfg.Evidence.Get(r.Context(), id, b)
	if err != nil {
		return nil, err
	}
	return diffViews(va, vb), nil
}

// diffViews lists what b has that a has not, what it lost, and what
// changed: records by id (snapshots are append-only, so a record's content
// is fixed and only conflicts' status and note may move), and the view's
// own fields.
func diffViews(a, b *warrant.View) []diffLine {
	var out []diffLine
	recs := func(what string, ra, rb map[string]string) {
		for _, id := range sortedKeys(rb) {
			if old, ok := ra[id]; !ok {
				out = append(out, diffLine{"added", what, id, rb[id]})
			} else if old != rb[id] {
				out = append(out, diffLine{"changed", what, id, old + " → " + rb[id]})
			}
		}
		for _, id := range sortedKeys(ra) {
			if _, ok := rb[id]; !ok {
				out = append(out, diffLine{"removed", what, id, ra[id]})
			}
		}
	}
	recs("assertion", assertionsOf(a), assertionsOf(b))
	recs("evidence", evidenceOf(a), evidenceOf(b))
	recs("check", checksOf(a), checksOf(b))
	recs("conflict", conflictsOf(a), conflictsOf(b))
	recs("lineage", lineageOf(a), lineageOf(b))
	field := func(name, x, y string) {
		if x != y {
			out = append(out, diffLine{"changed", "field", name, x + " → " + y})
		}
	}
	field("degraded", boolText(a.Degraded), boolText(b.Degraded))
	field("freshness_policy_seconds", itoa(a.Freshness), itoa(b.Freshness))
	field("retrieval_scope", a.RetrievalScope, b.RetrievalScope)
	field("omitted_sources", strings.Join(a.OmittedSources, ", "), strings.Join(b.OmittedSources, ", "))
	field("subjects", strings.Join(a.Subjects, ", "), strings.Join(b.Subjects, ", "))
	return out
}

func assertionsOf(v *warrant.View) map[string]string {
	m := map[string]string{}
	for _, x := range v.Assertions {
		m[x.AssertionID] = x.Text + " (" + x.AssertedAt + ", " + x.Source.SourceID + ")"
	}
	return m
}

func evidenceOf(v *warrant.View) map[string]string {
	m := map[string]string{}
	for _, x := range v.Evidence {
		m[x.EvidenceID] = x.Polarity + ": " + x.Content + " (" + x.ObservedAt + ", " + x.Source.SourceID + ")"
	}
	return m
}

func checksOf(v *warrant.View) map[string]string {
	m := map[string]string{}
	for _, x := range v.Checks {
		m[x.CheckID] = x.Method + " " + x.Result + " (" + x.ObservedAt + ", " + x.Source.SourceID + ")"
	}
	return m
}

func conflictsOf(v *warrant.View) map[string]string {
	m := map[string]string{}
	for _, x := range v.Conflicts {
		m[x.ConflictID] = x.Status + ": " + x.Note
	}
	return m
}

func lineageOf(v *warrant.View) map[string]string {
	m := map[string]string{}
	for _, x := range v.Lineage {
		m[x.FromID+" "+x.Kind+" "+x.ToID] = x.Kind
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
