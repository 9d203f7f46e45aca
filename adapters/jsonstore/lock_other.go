//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package jsonstore

import (
	"context"
	"errors"
	"os"
)

// This platform has no flock(2); rather than write without a lock, the
// store refuses to open (Open and Create fail on the first lock).
var errNoFlock = errors.New("jsonstore: file locking (flock) is not available on this platform")

func flock(context.Context, *os.File, int) (bool, error) { return false, errNoFlock }

func funlock(*os.File) error { return errNoFlock }

const (
	lockShared    = 1
	lockExclusive = 2
)
