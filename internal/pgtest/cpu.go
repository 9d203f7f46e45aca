package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUTime is the processor time (user + system) the throwaway server's
// processes have used so far: the postmaster and its children, backends
// included. Benchmarks take the difference over a run to charge the
// database's share of a call. ok is false for a server from EnvURL or
// where /proc cannot say.
func (c *Cluster) CPUTime() (d time.Duration, ok bool) {
	if c.bin == "" {
		return 0, false
	}
	raw, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	pm := strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state ppid ... utime(14) stime(15).
		s := string(stat)
		pid := strings.Fields(s)[0]
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 || (pid != pm && f[1] != pm) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	// Linux reports these in clock ticks of USER_HZ, 100 on every
	// architecture Go supports there.
	return time.Duration(ticks) * 10 * time.Millisecond, true
}
