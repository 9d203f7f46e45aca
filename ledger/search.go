package ledger

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxListLimit bounds one List call; discovery is for people and agents,
// not for dumping the ledger.
const MaxListLimit = 500

// PropositionSummary is one discovery hit: never a warrant, only what is
// stored.
type PropositionSummary struct {
	PropositionID string
	LatestViewID  string
	// Texts are the assertion texts of the latest snapshot.
	Texts []string
}

// List finds propositions whose id, or any assertion text of whose latest
// snapshot, contains query case-insensitively ("" matches all), ordered by
// proposition id, at most limit of them (clamped to 1..MaxListLimit).
//
// Assertion text is indexed with FTS5's trigram tokenizer, so a query of
// three or more ASCII characters is an index lookup; shorter or non-ASCII
// queries scan the text index. Candidates from older snapshots are
// checked against the latest one, so a text that a later snapshot dropped
// no longer finds the proposition.
func (l *Ledger) List(ctx context.Context, query string, limit int) ([]PropositionSummary, error) {
	limit = max(1, min(limit, MaxListLimit))
	if query == "" {
		return l.listAll(ctx, limit)
	}
	cands, err := l.candidates(ctx, query)
	if err != nil {
		return nil, err
	}
	fold := strings.ToLower(query)
	out := []PropositionSummary{}
	for _, id := range cands {
		s, err := l.summary(ctx, id)
		if err != nil {
			return nil, err
		}
		if s.matches(fold) {
			out = append(out, s)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

func (s PropositionSummary) matches(fold string) bool {
	if strings.Contains(strings.ToLower(s.PropositionID), fold) {
		return true
	}
	for _, t := range s.Texts {
		if strings.Contains(strings.ToLower(t), fold) {
			return true
		}
	}
	return false
}

func (l *Ledger) listAll(ctx context.Context, limit int) ([]PropositionSummary, error) {
	ids, err := l.strings(ctx, `SELECT DISTINCT proposition_id FROM snapshots ORDER BY proposition_id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	out := make([]PropositionSummary, 0, len(ids))
	for _, id := range ids {
		s, err := l.summary(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// candidates returns, sorted, the propositions whose id or some stored
// assertion text may contain query.
func (l *Ledger) candidates(ctx context.Context, query string) ([]string, error) {
	fold := strings.ToLower(query)
	ids, err := l.strings(ctx, `SELECT DISTINCT proposition_id FROM snapshots WHERE instr(lower(proposition_id), ?) > 0`, fold)
	if err != nil {
		return nil, err
	}
	var more []string
	if isASCII(query) && utf8.RuneCountInString(query) >= 3 {
		more, err = l.strings(ctx, `SELECT proposition_id FROM assertion_fts WHERE assertion_fts MATCH ?`, `"`+strings.ReplaceAll(query, `"`, `""`)+`"`)
	} else {
		more, err = l.scanText(ctx, fold)
	}
	if err != nil {
		return nil, err
	}
	all := append(ids, more...)
	slices.Sort(all)
	return slices.Compact(all), nil
}

// scanText is the fallback for queries the trigram index cannot serve; it
// folds case in Go so non-ASCII text matches as a person expects.
func (l *Ledger) scanText(ctx context.Context, fold string) ([]string, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT proposition_id, text FROM assertion_fts`)
	if err != nil {
		return nil, ledgerErr("search", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, ledgerErr("search", err)
		}
		if strings.Contains(strings.ToLower(text), fold) {
			out = append(out, id)
		}
	}
	return out, ledgerErrOrNil("search", rows.Err())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (l *Ledger) summary(ctx context.Context, id string) (PropositionSummary, error) {
	s, err := l.LatestSnapshot(ctx, id)
	if err != nil {
		return PropositionSummary{}, err
	}
	v, err := s.View()
	if err != nil {
		return PropositionSummary{}, err
	}
	out := PropositionSummary{PropositionID: id, LatestViewID: s.ViewID, Texts: []string{}}
	for _, a := range v.Assertions {
		out.Texts = append(out.Texts, a.Text)
	}
	return out, nil
}

func (l *Ledger) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := l.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, ledgerErr("search", err)
	}
	defer rows.Close()
	return scanStrings(rows)
}

func scanStrings(rows *sql.Rows) ([]string, error) {
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, ledgerErr("search", err)
		}
		out = append(out, s)
	}
	return out, ledgerErrOrNil("search", rows.Err())
}
