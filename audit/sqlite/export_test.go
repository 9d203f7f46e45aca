package sqlite

// CommitStats returns how many write transactions the log committed and
// how many writes they carried.
func (l *Log) CommitStats() (commits, writes int64) {
	return l.wr.commits.Load(), l.wr.written.Load()
}
