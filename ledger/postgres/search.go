package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// List finds propositions whose id, or any assertion text of whose latest
// snapshot, contains query case-insensitively (Unicode full case folding,
// snapshot.Fold, on both sides; "" matches all), ordered by proposition
// id, at most limit of them (clamped to 1..ledger.MaxListLimit): the SQLite
// ledger's answer. The folded search columns (trigram-indexed where
// pg_trgm exists) give candidates; each is checked against its latest
// snapshot, so a text a later snapshot dropped no longer finds it.
func (l *Ledger) List(ctx context.Context, query string, limit int) ([]ledger.PropositionSummary, error) {
	limit = max(1, min(limit, ledger.MaxListLimit))
	if query == "" {
		ids, err := l.ids(ctx, `SELECT proposition_id FROM propositions ORDER BY proposition_id LIMIT $1`, limit)
		if err != nil {
			return nil, err
		}
		return l.summaries(ctx, ids, "", limit)
	}
	pattern := "%" + likeEscape(searchable(query)) + "%"
	ids, err := l.ids(ctx, `SELECT proposition_id FROM propositions WHERE id_fold LIKE $1
		UNION SELECT proposition_id FROM assertion_text WHERE text_fold LIKE $1`, pattern)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ids, strings.Compare)
	return l.summaries(ctx, ids, snapshot.Fold(query), limit)
}

func isRefusal(err error, code string) bool {
	var we *warrant.Error
	return errors.As(err, &we) && we.Code == code
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// summaries reads the latest snapshot of each candidate and keeps those
// that match the folded query q ("" keeps all).
func (l *Ledger) summaries(ctx context.Context, ids []string, q string, limit int) ([]ledger.PropositionSummary, error) {
	out := []ledger.PropositionSummary{}
	for _, id := range ids {
		s, err := l.LatestSnapshot(ctx, id)
		if q != "" && (isRefusal(err, warrant.CodeMissingView) || isRefusal(err, warrant.CodeLimitExceeded)) {
			continue // as the SQLite ledger: a stray index row, or a snapshot too big to read here
		}
		if err != nil {
			return nil, err
		}
		v, err := s.View()
		if err != nil {
			return nil, err
		}
		sum := ledger.PropositionSummary{PropositionID: id, LatestViewID: s.ViewID, Texts: []string{}}
		match := q == "" || strings.Contains(snapshot.Fold(id), q)
		for _, a := range v.Assertions {
			sum.Texts = append(sum.Texts, a.Text)
			match = match || strings.Contains(snapshot.Fold(a.Text), q)
		}
		if match {
			out = append(out, sum)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

func (l *Ledger) ids(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := l.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, ledgerErr("search", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, ledgerErr("search", err)
		}
		out = append(out, string(id))
	}
	return out, ledgerErrOrNil("search", rows.Err())
}
