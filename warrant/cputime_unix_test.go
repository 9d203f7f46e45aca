//go:build unix

package warrant_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system. On a
// machine busy with other work, CPU time per operation stays a fair
// measure when wall time per operation does not.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
