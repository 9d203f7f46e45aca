//go:build unix

// Package procstop stops a process with SIGSTOP and waits until it has
// stopped, for tests that freeze a server. kill returns before the stop
// takes effect: a multi-threaded process (a Go server) stops thread by
// thread, and until the last has, it may still read a request and answer
// it — a test that calls at once can be answered by the "frozen" server.
package procstop

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Stop sends pid SIGSTOP and returns once /proc says it is stopped, or
// an error after limit. Where /proc cannot say (not Linux), it waits
// 100 ms instead.
func Stop(pid int, limit time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP %d: %w", pid, err)
	}
	stat := "/proc/" + strconv.Itoa(pid) + "/stat"
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			return nil
		}
		if state(b) == "T" {
			return nil
		}
	}
	return fmt.Errorf("process %d did not stop within %s of SIGSTOP", pid, limit)
}

// state is the state field of a /proc/PID/stat line: "PID (COMM) STATE
// …", where COMM may hold spaces and parentheses, so it is read after the
// last ")".
func state(stat []byte) string {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) == 0 {
		return ""
	}
	return string(f[0])
}
