package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/warrant"
)

// waitVisible polls the ledger, as a reader would, until the proposition
// has a snapshot; it returns how long that took, or fails after limit.
func waitVisible(t *testing.T, db, prop string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if l, err := openReader(db); err == nil {
			_, err = l.Latest(context.Background(), prop)
			l.Close()
			if err == nil {
				return time.Since(start)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not visible to a reader within %v while the writer keeps the pipe open", prop, limit)
	return 0
}

// A pipeline that keeps standard input open: each view is visible to
// readers soon after its line arrives, not at end of input.
func TestStdinViewsVisibleWhileThePipeStaysOpen(t *testing.T) {
	eachStore(t, testStdinViewsVisibleWhileThePipeStaysOpen)
}

func testStdinViewsVisibleWhileThePipeStaysOpen(t *testing.T, kind string) {
	db := freshDB(t, kind)
	pr, pw := io.Pipe()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"--db", db, "-"}, pr, &out, &errb) }()
	for i, prop := range []string{"P-1", "P-2"} {
		if _, err := io.WriteString(pw, view(prop, "v1", "extract")+"\n"); err != nil {
			t.Fatal(err)
		}
		if took := waitVisible(t, db, prop, 2*time.Second); took > 1500*time.Millisecond {
			t.Errorf("view %d visible after %v", i+1, took)
		}
	}
	pw.Close()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "2 stored") {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ewp-ingest did not end after its input was closed")
	}
}

// zeros is an endless stream of NUL bytes, like /dev/zero.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// Binary input is refused at once, by name, without reading it all.
func TestEndlessNULsRefusedPromptly(t *testing.T) { eachStore(t, testEndlessNULsRefusedPromptly) }

func testEndlessNULsRefusedPromptly(t *testing.T, kind string) {
	db := freshDB(t, kind)
	z := &zeros{}
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"--db", db, "-"}, z, &out, &errb) }()
	select {
	case code := <-done:
		if code != ingest.ExitRefused || !strings.Contains(errb.String(), "line 1, column 1 (byte offset 0): NUL byte") {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an endless stream of NUL bytes was not refused within 5 s")
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		code, _, stderr := runCLI(t, "", "--db", db, "/dev/zero")
		if code != ingest.ExitRefused || !strings.Contains(stderr, "NUL byte") {
			t.Errorf("/dev/zero: exit %d: %s", code, stderr)
		}
	}
}

// Refusals of text that is not JSON name the place and the problem.
// SQLite only: the messages are the splitter's, before any store; the
// store's part of a broken stream runs on both in
// TestStreamStopsAtUnreadableRest.
func TestSyntaxMessages(t *testing.T) {
	dir := t.TempDir()
	good := func(p string) string { return view(p, "v1", "extract") }
	oneLine := func(s string) string { return strings.ReplaceAll(s, "\n", "") }
	cases := []struct {
		name, content string
		args          []string
		code          int
		want          []string
		unwanted      []string
		stored        string
	}{
		{"garbage on line 2", oneLine(good("P-1")) + "\n{garbage\n" + oneLine(good("P-3")) + "\n", nil, ingest.ExitRefused,
			[]string{"garbage.jsonl: line 2: EWP_REFUSE_INVALID_EVIDENCE_VIEW: not JSON: line 2, column 2 (byte offset"}, []string{"line 4"}, "0 stored"},
		{"truncated last line, --partial", oneLine(good("P-1")) + "\n" + oneLine(good("P-2")) + "\n{\"proposition_id\": \"P-3\", \"vi", []string{"--partial"}, ingest.ExitPartial,
			[]string{"line 3: EWP_REFUSE_INVALID_EVIDENCE_VIEW: not JSON: line 3, column 27 (byte offset", "unterminated string"}, nil, "2 stored"},
		{"garbage line, --partial", oneLine(good("P-1")) + "\nnot json at all\n" + oneLine(good("P-3")) + "\n", []string{"--partial"}, ingest.ExitPartial,
			[]string{"line 2: EWP_REFUSE_INVALID_EVIDENCE_VIEW: not JSON: line 2, column 2", `unexpected 'o'; expected "null"`}, nil, "2 stored"},
		{"byte-order mark", "\xEF\xBB\xBF" + good("P-1"), nil, ingest.ExitRefused,
			[]string{"line 1, column 1 (byte offset 0): a UTF-8 byte-order mark (EF BB BF)", "remove it"}, []string{"ï"}, ""},
		{"NUL bytes", strings.Repeat("\x00", 1000), nil, ingest.ExitRefused,
			[]string{"NUL byte"}, []string{"empty"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := strings.ReplaceAll(strings.Fields(c.name)[0], ",", "") + ".jsonl"
			p := writeFile(t, dir, name, c.content)
			args := append([]string{"--db", filepath.Join(t.TempDir(), "ewp.db"), p}, c.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range c.unwanted {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
			if c.stored != "" && !strings.Contains(stdout, c.stored) {
				t.Errorf("stdout lacks %q:\n%s", c.stored, stdout)
			}
		})
	}
}

// A stream without --partial stops at its first refused view: what came
// before is stored, nothing after it.
func TestStreamStopsAtRefusedView(t *testing.T) { eachStore(t, testStreamStopsAtRefusedView) }

func testStreamStopsAtRefusedView(t *testing.T, kind string) {
	db := freshDB(t, kind)
	bad := strings.Replace(view("P-2", "v1", "extract"), `"supports"`, `"maybe"`, 1)
	in := strings.Join([]string{view("P-1", "v1", "extract"), bad, view("P-3", "v1", "extract")}, "\n")
	code, stdout, stderr := runCLI(t, strings.ReplaceAll(in, "\n ", " "), "--db", db, "-")
	if code != ingest.ExitRefused || !strings.Contains(stdout, "stopped at a refused view; 1 stored") || !strings.Contains(stderr, "line 2") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	l, err := openReader(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Latest(context.Background(), "P-1"); err != nil {
		t.Errorf("P-1, before the refused view, is not stored: %v", err)
	}
	if _, err := l.Latest(context.Background(), "P-3"); err == nil {
		t.Error("P-3, after the refused view, is stored")
	}
}

// --max-view-bytes bounds each view; a larger one is refused by name.
func TestMaxViewBytesFlag(t *testing.T) { eachStore(t, testMaxViewBytesFlag) }

func testMaxViewBytesFlag(t *testing.T, kind string) {
	dir := t.TempDir()
	p := writeFile(t, dir, "v.jsonl", strings.ReplaceAll(view("P-1", "v1", "extract"), "\n", "")+"\n")
	code, _, stderr := runCLI(t, "", "--db", freshDB(t, kind), "--max-view-bytes", "100", p)
	if code != ingest.ExitRefused || !strings.Contains(stderr, "EWP_REFUSE_LIMIT_EXCEEDED: the view is") || !strings.Contains(stderr, "over the limit of 100 (--max-view-bytes)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "--db", freshDB(t, kind), "--max-records", "0", p)
	if code != ingest.ExitUsage || !strings.Contains(stderr, "must be positive") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// The record, list and string limits reach the kernel's decoder.
func TestKernelLimitFlags(t *testing.T) { eachStore(t, testKernelLimitFlags) }

func testKernelLimitFlags(t *testing.T, kind string) {
	dir := t.TempDir()
	// One evidence item and one lineage edge: two records.
	two := strings.Replace(view("P-1", "v1", "extract"), `"evidence": [`, `"lineage": [{"kind": "derived_from", "from_id": "a", "to_id": "b"}], "evidence": [`, 1)
	p := writeFile(t, dir, "v.jsonl", strings.ReplaceAll(two, "\n", "")+"\n")
	for flag, field := range map[string]string{"--max-records": "MaxRecords", "--max-string-bytes": "MaxStringBytes"} {
		code, _, stderr := runCLI(t, "", "--db", freshDB(t, kind), flag, "1", p)
		if code != ingest.ExitRefused || !strings.Contains(stderr, "EWP_REFUSE_LIMIT_EXCEEDED") || !strings.Contains(stderr, field) {
			t.Fatalf("%s 1: exit %d: %s", flag, code, stderr)
		}
	}
}

// The defaults --help states are the kernel's.
func TestHelpStatesTheDefaultLimits(t *testing.T) {
	d := warrant.DefaultLimits
	for flag, n := range map[string]int{"--max-view-bytes N": d.MaxViewBytes, "--max-records N": d.MaxRecords,
		"--max-subjects N": d.MaxSubjects, "--max-string-bytes N": d.MaxStringBytes} {
		i := strings.Index(usage, flag)
		if i < 0 || !strings.Contains(usage[i:i+200], fmt.Sprintf("default %d)", n)) {
			t.Errorf("--help does not state %s's default %d", flag, n)
		}
	}
}

// A stream whose rest cannot be read (a list broken off) stops there:
// the views before it stay stored, and the exit code says it stopped.
func TestStreamStopsAtUnreadableRest(t *testing.T) { eachStore(t, testStreamStopsAtUnreadableRest) }

func testStreamStopsAtUnreadableRest(t *testing.T, kind string) {
	db := freshDB(t, kind)
	in := "[" + view("P-1", "v1", "extract") + ", " + view("P-2", "v1", "extract") + ", oops"
	code, stdout, stderr := runCLI(t, in, "--db", db, "-")
	if code != ingest.ExitRefused || !strings.Contains(stdout, "stopped") || !strings.Contains(stderr, "[2]: line 5, column 110 (byte offset 687): unexpected 'o'") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 stored") {
		t.Errorf("the two views before the break are not stored:\n%s", stdout)
	}
}

// A long-running stream tells its refusals as they happen, once each.
func TestStreamRefusalsToldAtOnce(t *testing.T) { eachStore(t, testStreamRefusalsToldAtOnce) }

func testStreamRefusalsToldAtOnce(t *testing.T, kind string) {
	db := freshDB(t, kind)
	pr, pw := io.Pipe()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"--db", db, "--partial", "-"}, pr, &out, &errb) }()
	go io.WriteString(pw, "{\"proposition_id\": 3}\n") //nolint:errcheck // checked by what arrives
	const want = "<stdin>: EWP_REFUSE_INVALID_EVIDENCE_VIEW: proposition_id"
	start := time.Now()
	for !strings.Contains(errb.String(), want) {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the refusal was not told while the stream stays open; stderr so far: %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() {
		io.WriteString(pw, strings.ReplaceAll(view("P-1", "v1", "extract"), "\n", "")+"\n") //nolint:errcheck // as above
		pw.Close()
	}()
	if code := <-done; code != ingest.ExitPartial || strings.Count(errb.String(), "EWP_REFUSE") != 1 || !strings.Contains(out.String(), "1 stored") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// Standard input redirected from a regular file is a file: all or nothing.
func TestStdinFromARegularFileIsAFile(t *testing.T) { eachStore(t, testStdinFromARegularFileIsAFile) }

func testStdinFromARegularFileIsAFile(t *testing.T, kind string) {
	dir := t.TempDir()
	bad := strings.Replace(view("P-2", "v1", "extract"), `"supports"`, `"maybe"`, 1)
	p := writeFile(t, dir, "in.jsonl", strings.ReplaceAll(view("P-1", "v1", "extract"), "\n", "")+"\n"+strings.ReplaceAll(bad, "\n", "")+"\n")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--db", freshDB(t, kind), "-"}, f, &out, &errb)
	if code != ingest.ExitRefused || !strings.Contains(out.String(), "refused, nothing written") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
