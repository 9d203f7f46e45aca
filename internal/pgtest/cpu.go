package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/procstop"
)

// CPUTime is the processor time (user + system) the throwaway server's
// processes have used so far: the postmaster and its children, backends
// included. Benchmarks take the difference over a run to charge the
// database's share of a call. ok is false for a server from EnvURL or
// where /proc cannot say.
func (c *Cluster) CPUTime() (d time.Duration, ok bool) {
	var ticks int64
	ok = c.eachProcess(func(_ int, f []string) {
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	})
	// Linux reports these in clock ticks of USER_HZ, 100 on every
	// architecture Go supports there.
	return time.Duration(ticks) * 10 * time.Millisecond, ok
}

// eachProcess calls fn with the pid and the /proc stat fields (those
// after the command name) of the throwaway server's processes: the
// postmaster and its children. false for a server from EnvURL or where
// /proc cannot say.
func (c *Cluster) eachProcess(fn func(pid int, fields []string)) bool {
	if c.bin == "" {
		return false
	}
	raw, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return false
	}
	pm := strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
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
		n, _ := strconv.Atoi(pid)
		fn(n, f)
	}
	return true
}

// Freeze stops every process of the server (SIGSTOP), as an operator's
// or a hypervisor's pause would: connections stay open and nothing
// answers. The returned thaw (also run when t ends) resumes them.
func (c *Cluster) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	c.needLocal(t)
	var pids []int
	if !c.eachProcess(func(pid int, _ []string) { pids = append(pids, pid) }) || len(pids) == 0 {
		t.Fatal("pgtest: the server's processes cannot be found in /proc")
	}
	for _, pid := range pids {
		// Stopped, not only signalled: a backend may otherwise answer
		// the test's next statement before the stop takes effect.
		if err := procstop.Stop(pid, 5*time.Second); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // a process that ended needs no thaw
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}
