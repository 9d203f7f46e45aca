//go:build unix

package sqlite_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system: on a
// machine shared with other work it is a fairer cost per record than
// wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
