package sqlite

import "context"

// CommitStats returns how many write transactions the log committed and
// how many writes they carried.
func (l *Log) CommitStats() (commits, writes int64) {
	return l.wr.commits.Load(), l.wr.written.Load()
}

// SelectSQL exposes the listing query for plan checks.
func (l *Log) SelectSQL(q Query) (string, []any, error) {
	return l.selectSQL(context.Background(), q)
}
