package ledger

import (
	"context"
	"database/sql"
	"strings"
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

// List finds propositions whose id contains query (case-insensitive) or
// whose assertion text matches it (FTS5, every word must occur, the last
// one as a prefix). Id matches come first, in id order, then text matches
// by relevance. An empty query lists propositions in id order. limit is
// clamped to 1..MaxListLimit.
func (l *Ledger) List(ctx context.Context, query string, limit int) ([]PropositionSummary, error) {
	limit = max(1, min(limit, MaxListLimit))
	ids, err := l.matchIDs(ctx, strings.TrimSpace(query), limit)
	if err != nil {
		return nil, err
	}
	if q := ftsQuery(query); q != "" && len(ids) < limit {
		more, err := l.matchText(ctx, q, limit)
		if err != nil {
			return nil, err
		}
		ids = appendNew(ids, more, limit)
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

func (l *Ledger) matchIDs(ctx context.Context, query string, limit int) ([]string, error) {
	pattern := "%" + likeEscape(query) + "%"
	return l.strings(ctx, `SELECT DISTINCT proposition_id FROM snapshots WHERE proposition_id LIKE ? ESCAPE '\' ORDER BY proposition_id LIMIT ?`, pattern, limit)
}

func (l *Ledger) matchText(ctx context.Context, q string, limit int) ([]string, error) {
	// Several assertions of one proposition may match; over-fetch, then
	// de-duplicate in order of rank.
	return l.strings(ctx, `SELECT proposition_id FROM assertion_fts WHERE assertion_fts MATCH ? ORDER BY rank LIMIT ?`, q, 4*limit)
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

func appendNew(ids, more []string, limit int) []string {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	for _, id := range more {
		if len(ids) >= limit {
			break
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// ftsQuery turns free text into an FTS5 query that cannot be a syntax
// error: every word is quoted (so AND, NEAR, *, : and quotes are plain
// text) and the last word matches as a prefix, so typing "postgre" finds
// "PostgreSQL".
func ftsQuery(q string) string {
	words := strings.Fields(q)
	parts := make([]string, 0, len(words))
	for _, w := range words {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	parts[len(parts)-1] += "*"
	return strings.Join(parts, " ")
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
