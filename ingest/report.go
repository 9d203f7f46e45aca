package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// Exit codes of ewp-ingest. They are part of its interface: pipelines
// branch on them.
const (
	ExitOK       = 0 // every view stored or already present
	ExitPartial  = 1 // --partial: some views refused, the rest stored
	ExitUsage    = 2 // bad flags or arguments; nothing read
	ExitRefused  = 3 // a file was refused whole (nothing of it written)
	ExitLedger   = 4 // the ledger could not be opened or written
	ExitBroken   = 5 // verify: the chain or a stored row is broken
	ExitInternal = 6 // unexpected failure (a bug): please report it
)

// Report is the outcome of one ewp-ingest run.
type Report struct {
	EvaluatedAt string       `json:"evaluated_at"`
	Files       []FileReport `json:"files"`
	Stored      int          `json:"stored"`
	Unchanged   int          `json:"unchanged"`
	Refused     int          `json:"refused"`
	// Warnings counts the warnings of every file (FileReport.Warnings).
	Warnings int `json:"warnings"`
	// Propositions counts the propositions this run touched; Warrants
	// holds the first of them with their axes at EvaluatedAt, and
	// WarrantsOmitted the number left out.
	Propositions int `json:"propositions"`
	// PropositionsCapped says Propositions is a lower bound: the run
	// touched more than maxTracked propositions.
	PropositionsCapped bool          `json:"propositions_capped,omitempty"`
	Warrants           []PropWarrant `json:"warrants"`
	WarrantsOmitted    int           `json:"warrants_omitted"`
	// Head is the ledger's chain head after the run: kept, it lets
	// `ewp-ingest verify --head` prove later that nothing was removed.
	Head *ledger.Head `json:"head,omitempty"`
	// DB is the ledger's path, for the verify command the text suggests.
	DB      string `json:"-"`
	touched *propSet
}

// PropWarrant is one touched proposition's warrant at the reporting time.
type PropWarrant struct {
	PropositionID string `json:"proposition_id"`
	ViewID        string `json:"view_id"`
	Acceptance    string `json:"acceptance,omitempty"`
	Conflict      string `json:"conflict,omitempty"`
	Verification  string `json:"verification,omitempty"`
	Currency      string `json:"currency,omitempty"`
	Sufficiency   string `json:"sufficiency,omitempty"`
	Error         string `json:"error,omitempty"`
}

// Add counts one file's outcome.
func (r *Report) Add(f FileReport) {
	r.Files = append(r.Files, f)
	r.Stored += f.Stored
	r.Unchanged += f.Unchanged
	r.Refused += len(f.Refused) + f.RefusedOmitted
	r.Warnings += len(f.Warnings) + f.WarningsOmitted
	if f.touched != nil {
		r.touched = f.touched // one set per Loader, across its inputs
		r.Propositions, r.PropositionsCapped = f.touched.count(), f.touched.capped
	}
}

// SetHead records the chain head read after the run.
func (r *Report) SetHead(ctx context.Context, l Ledger) error {
	h, err := l.Head(ctx)
	if err != nil {
		return err
	}
	r.Head = &h
	return nil
}

// Evaluate fills Warrants with the axes of the first limit touched
// propositions, read from the ledger's latest snapshot (what an agent would
// see now, including other writers' appends) at evaluatedAt.
func (r *Report) Evaluate(ctx context.Context, l Ledger, evaluatedAt string, limit int) error {
	r.EvaluatedAt = evaluatedAt
	r.Warrants = []PropWarrant{}
	var ids []string
	if r.touched != nil {
		ids = r.touched.first
	}
	n := min(limit, len(ids))
	r.WarrantsOmitted = r.Propositions - n
	for _, id := range ids[:n] {
		w, err := warrantOf(ctx, l, id, evaluatedAt)
		var le *ledger.Error
		if errors.As(err, &le) {
			return err
		}
		r.Warrants = append(r.Warrants, w)
	}
	return nil
}

func warrantOf(ctx context.Context, l Ledger, id, at string) (PropWarrant, error) {
	w := PropWarrant{PropositionID: id}
	v, err := l.Latest(ctx, id)
	if err != nil {
		w.Error = err.Error()
		return w, err
	}
	w.ViewID = v.ViewID
	wv, err := warrant.Evaluate(v, at)
	if err != nil {
		w.Error = err.Error()
		return w, err
	}
	a := wv.Warrant
	w.Acceptance, w.Conflict, w.Verification, w.Currency, w.Sufficiency = a.Acceptance, a.Conflict, a.Verification, a.Currency, a.Sufficiency
	return w, nil
}

// ExitCode maps the report to the documented exit codes.
func (r *Report) ExitCode() int {
	code := ExitOK
	for _, f := range r.Files {
		refused := len(f.Refused) + f.RefusedOmitted
		switch {
		case f.Stopped || (refused > 0 && !f.Written):
			return ExitRefused
		case refused > 0:
			code = ExitPartial
		}
	}
	return code
}

// maxRefusalsShown caps the refusals printed per file in text mode; the
// JSON report always has them all.
const maxRefusalsShown = 20

// WriteRefusals prints each refusal on its own line (to stderr); with
// told set, not those of streams, which Options.OnRefusal told already.
func (r *Report) WriteRefusals(w io.Writer, told bool) {
	for _, f := range r.Files {
		if told && f.Stream {
			continue
		}
		for i, x := range f.Refused {
			if i == maxRefusalsShown {
				fmt.Fprintf(w, "%s: ... and %d more refused views\n", esc(f.Name), len(f.Refused)-i+f.RefusedOmitted)
				break
			}
			fmt.Fprintln(w, esc(x.String()))
		}
		if f.RefusedOmitted > 0 && len(f.Refused) <= maxRefusalsShown {
			fmt.Fprintf(w, "%s: ... and %d more refused views\n", esc(f.Name), f.RefusedOmitted)
		}
	}
}

// WriteWarnings prints each warning on its own line (to stderr), as
// WriteRefusals prints refusals.
func (r *Report) WriteWarnings(w io.Writer, told bool) {
	for _, f := range r.Files {
		if told && f.Stream {
			continue
		}
		for i, x := range f.Warnings {
			if i == maxRefusalsShown {
				fmt.Fprintf(w, "%s: ... and %d more warnings (--json lists them all)\n", esc(f.Name), len(f.Warnings)-i+f.WarningsOmitted)
				break
			}
			fmt.Fprintln(w, esc(x.WarningString()))
		}
	}
}

// WriteText prints the per-file lines, the summary and the warrants.
func (r *Report) WriteText(w io.Writer) {
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s: %s\n", esc(f.Name), esc(fileLine(f)))
	}
	over := ""
	if r.PropositionsCapped {
		over = "over "
	}
	warned := ""
	if r.Warnings > 0 {
		warned = ", " + plural.Count(r.Warnings, "warning", "warnings")
	}
	fmt.Fprintf(w, "summary: %d stored, %d unchanged, %d refused%s; %s%s touched\n",
		r.Stored, r.Unchanged, r.Refused, warned, over, plural.Count(r.Propositions, "proposition", "propositions"))
	if r.Head != nil && r.Head.Seq == 0 {
		fmt.Fprintln(w, "chain head 0: the ledger is empty")
	} else if r.Head != nil {
		fmt.Fprintf(w, "chain head %s\n  keep it to prove later that nothing was removed: ewp-ingest verify --db %s --head %s\n",
			r.Head, esc(shellQuote(r.DB)), r.Head)
	}
	if len(r.Warrants) == 0 {
		return
	}
	fmt.Fprintf(w, "warrant at %s (latest snapshot of each proposition):\n", r.EvaluatedAt)
	for _, p := range r.Warrants {
		if p.Error != "" {
			fmt.Fprintf(w, "  %s  %s\n", esc(p.PropositionID), esc(p.Error))
			continue
		}
		fmt.Fprintf(w, "  %s  view %s  acceptance=%s conflict=%s verification=%s currency=%s sufficiency=%s\n",
			esc(p.PropositionID), esc(p.ViewID), p.Acceptance, p.Conflict, p.Verification, p.Currency, p.Sufficiency)
	}
	if r.WarrantsOmitted > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", r.WarrantsOmitted)
	}
}

func fileLine(f FileReport) string {
	what := string(f.Format) + ", " + plural.Count(f.Views, "view", "views")
	switch f.Format {
	case "":
		what = "unreadable"
	case FormatGraph:
		what = "graph document" // one document, not a count of views
	}
	switch {
	case f.Graph != "":
		return "graph: " + f.Graph
	case f.Stopped:
		return fmt.Sprintf("%s: stopped at a refused view; %d stored and %d unchanged before it stay, nothing after it was read", what, f.Stored, f.Unchanged)
	case len(f.Refused) > 0 && !f.Written:
		return fmt.Sprintf("%s: refused, nothing written (%d refused)", what, len(f.Refused)+f.RefusedOmitted)
	case len(f.Refused) > 0:
		return fmt.Sprintf("%s: %d stored, %d unchanged, %d refused (--partial)", what, f.Stored, f.Unchanged, len(f.Refused)+f.RefusedOmitted)
	}
	return fmt.Sprintf("%s: %d stored, %d unchanged", what, f.Stored, f.Unchanged)
}

// esc is how the text report prints what an input or the ledger holds
// (file names, ids, refusals that quote them): escaped for a terminal.
func esc(s string) string { return termtext.Escape(s) }

// shellQuote quotes a path for a command line a person may paste.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
