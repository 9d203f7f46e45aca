//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// canCreateIn reports whether this process may create files in dir. The
// kernel answers for read-only mounts (EROFS) and immutable directories
// (EPERM) too, which permission bits alone do not show, and root included.
func canCreateIn(dir string) bool {
	return unix.Access(dir, unix.W_OK|unix.X_OK) == nil
}
