package sqlite

import "context"

// SelectSQL exposes the listing query for plan checks.
func (l *Log) SelectSQL(q Query) (string, []any, error) {
	return l.selectSQL(context.Background(), q)
}
