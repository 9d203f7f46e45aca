package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// procUsage is what /proc tells of one process: its CPU time (user and
// system) and its major page faults, the reads of pages from the disk
// that it waited for. On a machine that pages out memory left idle (this
// project's VMs page out what has not been touched for a minute, page
// cache included), a server's first calls after a pause wait on such
// reads, and its latency then says more about the disk than the server.
type procUsage struct {
	cpu         time.Duration
	majorFaults int64
}

type usageSample struct {
	server, self procUsage
	machine      time.Duration // busy CPU time of all cores
	ok           bool
}

// usage samples the server process (this one when serving in-process),
// this process and the whole machine. It is not ok when the server's
// process is unknown or /proc cannot be read.
func usage(srv *server) usageSample {
	self, ok1 := readProcUsage("self")
	machine, ok3 := machineCPU()
	if srv.inproc {
		return usageSample{server: self, self: self, machine: machine, ok: ok1 && ok3}
	}
	if len(srv.pids) == 0 {
		return usageSample{}
	}
	var sv procUsage
	ok2 := true
	for _, pid := range srv.pids {
		u, ok := readProcUsage(strconv.Itoa(pid))
		sv.cpu, sv.majorFaults, ok2 = sv.cpu+u.cpu, sv.majorFaults+u.majorFaults, ok2 && ok
	}
	return usageSample{server: sv, self: self, machine: machine, ok: ok1 && ok2 && ok3}
}

// machineCPU is the busy CPU time of all cores (everything but idle and
// iowait) from the first line of /proc/stat.
func machineCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond, true
}

// readProcUsage reads /proc/<pid>/stat.
func readProcUsage(pid string) (procUsage, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procUsage{}, false
	}
	return parseProcStat(b)
}

// parseProcStat takes majflt, utime and stime (fields 12, 14 and 15) from
// the text of /proc/<pid>/stat. The clock tick is 100 Hz on every Linux
// this runs on (USER_HZ).
func parseProcStat(b []byte) (procUsage, bool) {
	// The fields after the command name, which is in parentheses and may
	// hold spaces and parentheses; the first of them is field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procUsage{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return procUsage{}, false
	}
	var n [3]int64
	for k, field := range []int{12, 14, 15} {
		v, err := strconv.ParseInt(f[field-3], 10, 64)
		if err != nil {
			return procUsage{}, false
		}
		n[k] = v
	}
	return procUsage{cpu: time.Duration(n[1]+n[2]) * 10 * time.Millisecond, majorFaults: n[0]}, true
}
