package console

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// pageSize is the rows per page of every list.
const pageSize = 50

// verifyResult is the last verification of a chain, kept for the overview.
type verifyResult struct {
	Running bool
	At      time.Time
	OK      bool
	Detail  string
}

type overviewData struct {
	Summary     snapshotView
	HasLog      bool
	Tail        tailView
	Pending     []audit.Decision
	PendingMore bool
	LedgerHead  ChainHead
	LogHead     audit.Head
	Errors      []string
	Ledger, Log verifyResult
	CanVerifyLg bool
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	d := overviewData{Summary: c.summary.view(), HasLog: c.cfg.Log != nil, CanVerifyLg: c.cfg.LogVerify != nil}
	var err error
	if d.LedgerHead, err = c.cfg.Evidence.Head(ctx); err != nil {
		d.Errors = append(d.Errors, "ledger head: "+err.Error())
	}
	if c.cfg.Log != nil {
		d.Tail = c.tail.view()
		if d.LogHead, err = c.cfg.Log.Head(ctx); err != nil {
			d.Errors = append(d.Errors, "decision log head: "+err.Error())
		}
		if d.Pending, err = c.cfg.Log.List(ctx, audit.Filter{Pending: true, Limit: 11}); err != nil {
			d.Errors = append(d.Errors, "pending confirmations: "+err.Error())
		}
		if len(d.Pending) > 10 {
			d.Pending, d.PendingMore = d.Pending[:10], true
		}
	}
	c.verifyMu.Lock()
	d.Ledger, d.Log = c.verified["ledger"], c.verified["log"]
	c.verifyMu.Unlock()
	c.render(w, r, http.StatusOK, "overview", signedIn(s, "overview", "Overview", d))
}

// verify starts a chain walk in the background (a large ledger takes a
// while) and goes back to the overview, which shows it running and then
// its result.
func (c *Console) verify(w http.ResponseWriter, r *http.Request, s *session) {
	target := r.PostFormValue("target")
	var run func(context.Context) (string, error)
	switch {
	case target == "ledger":
		run = c.cfg.Evidence.Verify
	case target == "log" && c.cfg.LogVerify != nil:
		run = c.cfg.LogVerify
	default:
		c.errorPage(w, r, http.StatusBadRequest, "Nothing to verify", "target must be ledger, or log when the decision log can be verified.")
		return
	}
	c.verifyMu.Lock()
	if !c.verified[target].Running {
		c.verified[target] = verifyResult{Running: true, At: c.cfg.Now()}
		c.walks.Add(1)
		go c.runVerify(target, run)
	}
	c.verifyMu.Unlock()
	http.Redirect(w, r, BasePath+"#verify", http.StatusSeeOther)
}

// runVerify walks a chain on the console's lifetime: it outlives the
// page that started it, not the console (Close ends it and waits).
func (c *Console) runVerify(target string, run func(context.Context) (string, error)) {
	defer c.walks.Done()
	detail, err := run(c.life)
	res := verifyResult{At: c.cfg.Now(), OK: err == nil, Detail: detail}
	if err != nil {
		res.Detail = err.Error()
	}
	c.verifyMu.Lock()
	c.verified[target] = res
	c.verifyMu.Unlock()
}

type propRow struct {
	ID    string
	Known bool
	State propState
}

type propositionsData struct {
	Query, State string
	Filters      []stateFilter
	Rows         []propRow
	Total        int
	Page, Pages  int
	Capped       bool
	AsOf         time.Time
	Err          string
}

// maxSearch bounds a text search (the store's own limit).
const maxSearch = 500

func (c *Console) propositions(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	d := propositionsData{Query: q, State: r.URL.Query().Get("state"), Filters: stateFilters, Page: pageNumber(r.URL.Query().Get("page"))}
	if !validState(d.State) {
		d.State = ""
	}
	off := (d.Page - 1) * pageSize
	var ids []string
	if q == "" {
		ids, d.Total = c.summary.page(d.State, off, pageSize)
	} else {
		found := c.summary.search(q, maxSearch)
		d.Capped = len(found) == maxSearch
		found = c.keepState(found, d.State)
		d.Total = len(found)
		if off < len(found) {
			ids = found[off:min(off+pageSize, len(found))]
		}
	}
	for _, id := range ids {
		st, ok := c.summary.state(id)
		d.Rows = append(d.Rows, propRow{ID: id, Known: ok, State: st})
	}
	d.Pages = max(1, (d.Total+pageSize-1)/pageSize)
	d.AsOf = c.summary.view().AsOf
	c.render(w, r, http.StatusOK, "propositions", signedIn(s, "propositions", "Propositions", d))
}

func validState(k string) bool {
	for _, f := range stateFilters {
		if f.Key == k {
			return true
		}
	}
	return false
}

// keepState filters search hits by the summary's state.
func (c *Console) keepState(ids []string, key string) []string {
	if key == "" {
		return ids
	}
	var match func(*warrant.Axes) bool
	for _, f := range stateFilters {
		if f.Key == key {
			match = f.match
		}
	}
	out := ids[:0:0]
	for _, id := range ids {
		if st, ok := c.summary.state(id); ok && st.Err == "" && match(&st.Axes) {
			out = append(out, id)
		}
	}
	return out
}

// maxPage bounds a ?page= number so that its offset, (page-1)*pageSize,
// and the next page's number fit an int even on 32-bit platforms: a page
// past the end is an empty page, never an overflow into a negative slice
// bound.
const maxPage = math.MaxInt32 / pageSize

// pageNumber is a ?page= value as a page number from 1 to maxPage; what
// is not a number, or below 1, is page 1.
func pageNumber(s string) int {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"):
		return maxPage
	case err != nil || n < 1:
		return 1
	}
	return min(n, maxPage)
}
