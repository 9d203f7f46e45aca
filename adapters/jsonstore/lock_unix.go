//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package jsonstore

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flock takes an advisory lock on f (unix.LOCK_SH or unix.LOCK_EX). It
// first tries without blocking; otherwise it waits in the kernel, which
// queues waiters fairly, from a goroutine so that ctx can end the wait.
// On a cancelled wait that goroutine keeps f (handedOff is true): it
// releases the lock if it gets it after all and closes f, so the caller
// must not touch f again.
func flock(ctx context.Context, f *os.File, how int) (handedOff bool, err error) {
	fd := int(f.Fd())
	err = unix.Flock(fd, how|unix.LOCK_NB)
	if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- blockingFlock(fd, how) }()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				unix.Flock(fd, unix.LOCK_UN)
			}
			f.Close()
		}()
		return true, ctx.Err()
	}
}

func blockingFlock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func funlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

const (
	lockShared    = unix.LOCK_SH
	lockExclusive = unix.LOCK_EX
)
