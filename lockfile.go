// Package ewp holds the release lock, embedded so that every command can
// say which release it was built from (release.PrintVersion).
package ewp

import _ "embed"

// ReleaseLock is RELEASE.lock.json as committed when the binary was built.
//
//go:embed RELEASE.lock.json
var ReleaseLock []byte
