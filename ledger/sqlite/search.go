package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"bytes"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ewp-go/ewp/warrant"
)

// List finds propositions whose id, or any assertion text of whose latest
// snapshot, contains query case-insensitively ("" matches all), ordered by
// proposition id, at most limit of them (clamped to 1..MaxListLimit).
// Case-insensitive means Unicode full case folding on both sides (see
// fold). Any query is searched as text: a NUL or FTS syntax characters in
// it are characters like any other.
//
// Assertion text is indexed with FTS5's trigram tokenizer, so a query of
// three or more characters is an index lookup; shorter ones (and a query
// holding a NUL, which FTS5's query syntax cannot carry) scan the text
// index. On a ledger created before the index held folded text (see
// metaSearchText) only ASCII queries use it. Ids are matched by one
// linear pass over the distinct ids, SQLite folding ASCII ids and Go the
// others. Candidates are checked against the latest snapshot, so a text
// that a later snapshot dropped no longer finds the proposition, and a
// search index row naming no stored proposition is skipped (Verify
// reports it).
func (l *Ledger) List(ctx context.Context, query string, limit int) ([]ledger.PropositionSummary, error) {
	limit = max(1, min(limit, ledger.MaxListLimit))
	if query == "" {
		return l.listAll(ctx, limit)
	}
	q := fold(query)
	cands, err := l.candidates(ctx, q)
	if err != nil {
		return nil, err
	}
	out := []ledger.PropositionSummary{}
	for _, id := range cands {
		s, err := l.summary(ctx, id)
		if isCode(err, warrant.CodeMissingView) || isCode(err, warrant.CodeLimitExceeded) {
			continue // a stray index row, or a snapshot too big to read here
		}
		if err != nil {
			return nil, err
		}
		if matches(s, q) {
			out = append(out, s)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

func isCode(err error, code string) bool {
	var we *warrant.Error
	return errors.As(err, &we) && we.Code == code
}

// matches checks a candidate against the folded query q.
func matches(s ledger.PropositionSummary, q string) bool {
	if strings.Contains(fold(s.PropositionID), q) {
		return true
	}
	for _, t := range s.Texts {
		if strings.Contains(fold(t), q) {
			return true
		}
	}
	return false
}

func (l *Ledger) listAll(ctx context.Context, limit int) ([]ledger.PropositionSummary, error) {
	ids, err := l.strings(ctx, `SELECT DISTINCT proposition_id FROM snapshots ORDER BY proposition_id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ledger.PropositionSummary, 0, len(ids))
	for _, id := range ids {
		s, err := l.summary(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// idCandidatesSQL keeps the ids that SQLite's ASCII lower() finds the
// folded query in, which is exact for ASCII ids, and every id that is not
// plain ASCII (length() counts characters up to a NUL, octet_length bytes),
// which Go then folds. ?2 is false for a query holding a NUL, which
// lower() and instr() cannot be trusted with.
const idCandidatesSQL = `SELECT DISTINCT proposition_id FROM snapshots
WHERE (?2 AND instr(lower(proposition_id), ?1) > 0) OR length(proposition_id) <> octet_length(proposition_id)`

// candidates returns, sorted, the propositions whose id contains the
// folded query q or some stored assertion text of which may contain it.
func (l *Ledger) candidates(ctx context.Context, q string) ([]string, error) {
	nul := strings.IndexByte(q, 0) >= 0
	rows, err := l.strings(ctx, idCandidatesSQL, q, !nul)
	if err != nil {
		return nil, err
	}
	ids := rows[:0]
	for _, id := range rows {
		if strings.Contains(fold(id), q) {
			ids = append(ids, id)
		}
	}
	var more []string
	if !nul && utf8.RuneCountInString(q) >= 3 && (l.foldedText || isASCII(q)) {
		more, err = l.strings(ctx, `SELECT proposition_id FROM assertion_fts WHERE assertion_fts MATCH ?`, `"`+strings.ReplaceAll(q, `"`, `""`)+`"`)
	} else {
		more, err = l.scanText(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	all := append(ids, more...)
	slices.Sort(all)
	return slices.Compact(all), nil
}

// scanText is the fallback for queries the trigram index cannot serve. A
// folded index is compared as it is; an older one is folded row by row.
func (l *Ledger) scanText(ctx context.Context, q string) ([]string, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT proposition_id, text FROM assertion_fts`)
	if err != nil {
		return nil, ledgerErr("search", err)
	}
	defer rows.Close()
	var out []string
	var text sql.RawBytes
	needle := []byte(q)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, ledgerErr("search", err)
		}
		if l.foldedText && bytes.Contains(text, needle) || !l.foldedText && strings.Contains(fold(string(text)), q) {
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

func (l *Ledger) summary(ctx context.Context, id string) (ledger.PropositionSummary, error) {
	s, err := l.LatestSnapshot(ctx, id)
	if err != nil {
		return ledger.PropositionSummary{}, err
	}
	v, err := s.View()
	if err != nil {
		return ledger.PropositionSummary{}, err
	}
	out := ledger.PropositionSummary{PropositionID: id, LatestViewID: s.ViewID, Texts: []string{}}
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
