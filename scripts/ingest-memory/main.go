// Command ingest-memory measures ewp-ingest on the inputs issue #11 named:
// a large JSON Lines file (1.5 GB by default), a stream from a pipe the
// writer keeps open, and /dev/zero. For each it prints the wall time, the
// rate and the child's peak resident set (getrusage), and for the stream
// how long each view took to become visible to a reader of the ledger.
// Inputs and ledgers go to a temporary directory, deleted afterwards. It
// takes minutes of both cores: run it by hand, not in CI.
//
//	go run ./scripts/ingest-memory [-size 1500] [-dir /tmp] [-bin path/to/ewp-ingest]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
)

func main() {
	sizeMB := flag.Int64("size", 1500, "MB of JSON Lines to generate for the file run")
	dir := flag.String("dir", os.TempDir(), "directory for the input and the ledgers (a subdirectory, deleted after)")
	bin := flag.String("bin", "", "ewp-ingest binary (default: build ./cmd/ewp-ingest)")
	flag.Parse()
	log.SetFlags(0)
	work, err := os.MkdirTemp(*dir, "ingest-memory-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	if *bin == "" {
		*bin = filepath.Join(work, "ewp-ingest")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/ewp-ingest").CombinedOutput(); err != nil {
			log.Fatalf("go build: %v\n%s", err, out)
		}
	}
	fileRun(*bin, work, *sizeMB<<20)
	streamRun(*bin, work)
	zeroRun(*bin, work)
}

// result is one child's measurements.
type result struct {
	wall   time.Duration
	maxRSS int64 // bytes
	code   int
	stderr string
}

// measure runs the command and reads its peak resident set from getrusage.
func measure(cmd *exec.Cmd) result {
	var errb bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &errb
	}
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		log.Fatalf("%s: %v", cmd, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // KB on Linux
	}
	return r
}

// fileRun generates size bytes of synthetic views (about 1.3 KB each,
// four snapshots per proposition, trusted origins) and loads the file.
func fileRun(bin, work string, size int64) {
	input := filepath.Join(work, "input.jsonl")
	f, err := os.Create(input)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	n := 0
	for ; written < size; n++ {
		line := snapshottest.SyntheticView(n/4, n%4)
		w.Write(line)     //nolint:errcheck // checked at Flush
		w.WriteByte('\n') //nolint:errcheck // checked at Flush
		written += int64(len(line)) + 1
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	r := measure(exec.Command(bin, "--db", filepath.Join(work, "file.db"), "--attest-trusted-origins", "--quiet", "--axes", "0", input))
	os.Remove(input)
	if r.code != 0 {
		log.Fatalf("file run: exit %d\n%s", r.code, r.stderr)
	}
	fmt.Printf("file:   %d MB of JSON Lines, %d views: %.1f s, %.0f views/s, peak RSS %d MB\n",
		written>>20, n, r.wall.Seconds(), float64(n)/r.wall.Seconds(), r.maxRSS>>20)
}

// streamRun pipes views one at a time into ewp-ingest - and measures how
// soon a reader of the ledger sees each, while the pipe stays open.
func streamRun(bin, work string) {
	db := filepath.Join(work, "stream.db")
	pr, pw, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(bin, "--db", db, "--attest-trusted-origins", "--quiet", "-")
	cmd.Stdin = pr
	done := make(chan result, 1)
	go func() { done <- measure(cmd) }()
	var lags []time.Duration
	for i := range 3 {
		sent := time.Now()
		if _, err := pw.Write(append(snapshottest.SyntheticView(i, 0), '\n')); err != nil {
			log.Fatal(err)
		}
		lags = append(lags, visible(db, fmt.Sprintf("P-%07d", i), sent))
		time.Sleep(time.Second) // the writer keeps the pipe open, idle
	}
	pw.Close()
	pr.Close()
	r := <-done
	if r.code != 0 {
		log.Fatalf("stream run: exit %d\n%s", r.code, r.stderr)
	}
	fmt.Printf("stream: 3 views through a pipe kept open: visible to a reader after %s; peak RSS %d MB\n", joinLags(lags), r.maxRSS>>20)
}

// visible polls the ledger as a reader until prop has a snapshot.
func visible(db, prop string, since time.Time) time.Duration {
	for time.Since(since) < 10*time.Second {
		if l, err := sqlite.Open(db, sqlite.Options{ReadOnly: true}); err == nil {
			_, err = l.Latest(context.Background(), prop)
			l.Close()
			if err == nil {
				return time.Since(since)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	log.Fatalf("%s not visible after 10 s", prop)
	return 0
}

func joinLags(lags []time.Duration) string {
	s := make([]string, len(lags))
	for i, d := range lags {
		s[i] = fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return strings.Join(s, ", ")
}

// zeroRun loads /dev/zero, which must be refused at once in flat memory.
func zeroRun(bin, work string) {
	r := measure(exec.Command(bin, "--db", filepath.Join(work, "zero.db"), "/dev/zero"))
	first, _, _ := strings.Cut(r.stderr, "\n")
	fmt.Printf("zero:   /dev/zero: exit %d after %d ms, peak RSS %d MB: %s\n", r.code, r.wall.Milliseconds(), r.maxRSS>>20, first)
}
