package postgres_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
)

const consumerEnv = "EWP_AUDIT_PG_CONSUMER"

// consumerChild, in a child started by TestConsumeRaceAcrossProcesses,
// opens the log, says "ready", waits for "go" on stdin, then presents one
// approval from 16 goroutines at once and prints "won" or "used" for each.
func consumerChild() bool {
	arg := os.Getenv(consumerEnv)
	if arg == "" {
		return false
	}
	url, approvalID, _ := strings.Cut(arg, "|")
	l, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer l.Close()
	fmt.Println("ready")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); strings.TrimSpace(line) != "go" {
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			err := l.RecordUse(ctx, audittest.UsingDecision(approvalID, 0))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				fmt.Println("won")
			case errors.Is(err, audit.ErrApprovalUsed):
				fmt.Println("used")
			default:
				fmt.Println("error:", err)
			}
		})
	}
	wg.Wait()
	return true
}

// TestConsumeRaceAcrossProcesses: four processes (replicas), 16 callers
// each, present one single-use approval at the same moment: exactly one
// of the 64 wins, the others are told it was used.
func TestConsumeRaceAcrossProcesses(t *testing.T) {
	url := newDB(t)
	l := openLog(t, url, postgres.Options{})
	d := audittest.PendingDecision("P-db", 1)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatal(err)
	}
	type child struct {
		cmd *exec.Cmd
		in  *os.File
		out *bufio.Scanner
	}
	var children []child
	for range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), consumerEnv+"="+url+"|"+a.ID)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		c := child{cmd: cmd, in: w, out: bufio.NewScanner(out)}
		if !c.out.Scan() || c.out.Text() != "ready" {
			t.Fatalf("a consumer did not start: %q", c.out.Text())
		}
		children = append(children, c)
	}
	for _, c := range children {
		fmt.Fprintln(c.in, "go")
		c.in.Close()
	}
	counts := map[string]int{}
	for _, c := range children {
		for c.out.Scan() {
			counts[c.out.Text()]++
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("consumer: %v", err)
		}
	}
	if counts["won"] != 1 || counts["used"] != 63 {
		t.Fatalf("64 presentations over 4 processes: %v; want 1 won, 63 used", counts)
	}
	rep := audittest.MustVerify(t, l)
	if rep.Uses != 1 {
		t.Fatalf("report %+v", rep)
	}
}
