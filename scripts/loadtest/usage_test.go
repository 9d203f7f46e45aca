package main

import (
	"testing"
	"time"
)

// A /proc/<pid>/stat line, its command name holding ") (", gives the
// major faults and the CPU time.
func TestParseProcStat(t *testing.T) {
	line := "4242 (ewp ) (mcp) S 1 4242 4242 0 -1 4194560 1234 0 77 0 250 31 0 0 20 0 9 0 100 2000000 3000 18446744073709551615\n"
	u, ok := parseProcStat([]byte(line))
	if !ok || u.majorFaults != 77 || u.cpu != 2810*time.Millisecond {
		t.Errorf("parseProcStat = %+v, %v; want 77 major faults and 2.81 s", u, ok)
	}
	for _, bad := range []string{"", "4242 (ewp-mcp", "4242 (ewp-mcp) S 1 2", "4242 (x) S 1 4242 4242 0 -1 4194560 1234 0 x 0 250 31"} {
		if u, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) = %+v, want not ok", bad, u)
		}
	}
}
