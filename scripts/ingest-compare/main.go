// Command ingest-compare measures two ewp-ingest binaries on the same
// inputs, run alternately (old, new, old, new, ...) so that both see the
// same load on a shared machine: for each shape it prints each run's wall
// time, CPU time, views/s, records/s and peak resident set (getrusage),
// then the medians and the ratios new/old. The shapes are the ingest
// benchmarks' (ingest/bench_test.go, written by TestWriteBenchInputs):
// 100,000 views made from the reference pack's fixtures, and 1,000 views
// of 200 assertions. It takes minutes of both cores: run it by hand.
//
//	go run ./scripts/ingest-compare -old-commit 7d56c0c [-runs 3] [-dir /tmp]
//	go run ./scripts/ingest-compare -old path/to/ewp-ingest [-new path/to/ewp-ingest]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A shape is one input and what it holds.
type shape struct {
	name, file     string
	views, records int
}

var shapes = []shape{
	{"100,000 views from the reference fixtures", "fixtures.jsonl", 100_000, 0},
	{"1,000 views of 200 assertions", "assertions200.jsonl", 1000, 200_000},
}

func main() {
	oldBin := flag.String("old", "", "the old ewp-ingest binary")
	oldCommit := flag.String("old-commit", "", "build the old ewp-ingest from this commit instead (git worktree)")
	newBin := flag.String("new", "", "the new ewp-ingest binary (default: build ./cmd/ewp-ingest)")
	runs := flag.Int("runs", 3, "runs of each binary on each shape")
	dir := flag.String("dir", os.TempDir(), "directory for the inputs, binaries and ledgers (a subdirectory, deleted after)")
	flag.Parse()
	log.SetFlags(0)
	if (*oldBin == "") == (*oldCommit == "") {
		log.Fatal("give one of -old BINARY and -old-commit COMMIT")
	}
	work, err := os.MkdirTemp(*dir, "ingest-compare-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	if *oldCommit != "" {
		*oldBin = buildAt(work, *oldCommit)
	}
	if *newBin == "" {
		*newBin = filepath.Join(work, "ewp-ingest-new")
		goBuild(".", *newBin)
	}
	cmd := exec.Command("go", "test", "./ingest", "-run", "^TestWriteBenchInputs$", "-count=1")
	cmd.Env = append(os.Environ(), "EWP_INGEST_INPUTS="+work)
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("writing the inputs: %v\n%s", err, out)
	}
	fmt.Printf("old %s\nnew %s\nload average at start %s\n", *oldBin, *newBin, loadAverage())
	for _, s := range shapes {
		compare(s, *oldBin, *newBin, work, *runs)
	}
	fmt.Printf("\nload average at end %s\n", loadAverage())
}

// buildAt builds cmd/ewp-ingest as of commit in a temporary worktree.
func buildAt(work, commit string) string {
	tree := filepath.Join(work, "old-tree")
	if out, err := exec.Command("git", "worktree", "add", "--detach", tree, commit).CombinedOutput(); err != nil {
		log.Fatalf("git worktree add %s: %v\n%s", commit, err, out)
	}
	defer exec.Command("git", "worktree", "remove", "--force", tree).Run() //nolint:errcheck // best effort
	bin := filepath.Join(work, "ewp-ingest-old")
	goBuild(tree, bin)
	return bin
}

func goBuild(dir, out string) {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/ewp-ingest")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("go build in %s: %v\n%s", dir, err, b)
	}
}

// result is one run's measurements.
type result struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

// compare loads the shape's input with each binary in turn, runs times.
func compare(s shape, oldBin, newBin, work string, runs int) {
	input := filepath.Join(work, s.file)
	st, err := os.Stat(input)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n%s (%d MB, %d bytes per view)\n", s.name, st.Size()>>20, st.Size()/int64(s.views))
	var old, new []result
	var ratios []float64 // rate new/old of each pair run one after the other
	for i := range runs {
		for _, b := range []struct {
			name string
			bin  string
			into *[]result
		}{{"old", oldBin, &old}, {"new", newBin, &new}} {
			r := load(b.bin, input, filepath.Join(work, fmt.Sprintf("%s-%d.db", b.name, i)))
			*b.into = append(*b.into, r)
			fmt.Printf("  %s run %d: %s  (load %s)\n", b.name, i+1, s.line(r), loadAverage())
		}
		ratios = append(ratios, old[i].wall.Seconds()/new[i].wall.Seconds())
	}
	slices.Sort(ratios)
	mo, mn := median(old), median(new)
	fmt.Printf("  median old: %s\n  median new: %s\n", s.line(mo), s.line(mn))
	fmt.Printf("  new/old: rate %.2f× (each pair: %.2f), CPU %.2f×, peak RSS %.2f×\n",
		ratios[len(ratios)/2], ratios, mn.cpu.Seconds()/mo.cpu.Seconds(), float64(mn.maxRSS)/float64(mo.maxRSS))
}

func (s shape) line(r result) string {
	l := fmt.Sprintf("%6.2f s wall, %6.2f s CPU, %7.0f views/s", r.wall.Seconds(), r.cpu.Seconds(), float64(s.views)/r.wall.Seconds())
	if s.records > 0 {
		l += fmt.Sprintf(", %7.0f records/s", float64(s.records)/r.wall.Seconds())
	}
	return l + fmt.Sprintf(", peak RSS %4d MB", r.maxRSS>>20)
}

// median is the run with the median wall time, with the median CPU time
// and peak RSS of all runs.
func median(rs []result) result {
	pick := func(f func(result) int64) int64 {
		v := make([]int64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return result{
		wall:   time.Duration(pick(func(r result) int64 { return int64(r.wall) })),
		cpu:    time.Duration(pick(func(r result) int64 { return int64(r.cpu) })),
		maxRSS: pick(func(r result) int64 { return r.maxRSS }),
	}
}

// load runs bin on input into a new ledger db (deleted after), as the
// benchmarks load: trusted origins attested, no report of axes.
func load(bin, input, db string) result {
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(db + suffix)
		}
	}()
	cmd := exec.Command(bin, "--db", db, "--attest-trusted-origins", "--quiet", "--axes", "0", input)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s: %v\n%s", cmd, err, errb.String())
	}
	r := result{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // KB on Linux
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
