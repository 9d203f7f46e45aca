//go:build !unix

package sqlite

// canCreateIn assumes dir is writable where access(2) is not available;
// a read-only open then behaves as before (plain mode=ro).
func canCreateIn(string) bool { return true }
