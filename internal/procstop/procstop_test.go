//go:build unix

package procstop

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestStopWaitsForTheStoppedState(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := Stop(cmd.Process.Pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, err := readStat(cmd.Process.Pid); err == nil && state(b) != "T" {
		t.Fatalf("state %q after Stop", state(b))
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
}

func TestState(t *testing.T) {
	for in, want := range map[string]string{
		"12 (sleep) S 1 12":  "S",
		"12 (a b) c) T 1 12": "T",
		"12 (x)":             "",
		"garbage":            "",
	} {
		if got := state([]byte(in)); got != want {
			t.Errorf("state(%q) = %q, want %q", in, got, want)
		}
	}
}

func readStat(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
}
