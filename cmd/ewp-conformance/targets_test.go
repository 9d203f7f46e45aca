package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/conformance"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/release"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(fakeEnv); name != "" {
		os.Exit(runFake(name))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds ewp-conformance, ewp-mcp and ewp-ingest once per test
// run, into a directory removed when the tests end.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "ewp-conformance-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator),
			"github.com/ewp-go/ewp/cmd/ewp-conformance", "github.com/ewp-go/ewp/cmd/ewp-mcp", "github.com/ewp-go/ewp/cmd/ewp-ingest")
		var out []byte
		if out, buildErr = cmd.CombinedOutput(); buildErr != nil {
			buildErr = &buildError{string(out), buildErr}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// judged runs the suite with --json and decodes the run, failing the test
// if the exit status is not want or the run took longer than limit.
func judged(t *testing.T, want int, limit time.Duration, args ...string) conformance.Run {
	t.Helper()
	start := time.Now()
	code, out, errs := runCmd(append(args, "--json"), "")
	if took := time.Since(start); took > limit {
		t.Errorf("the run took %v, over %v", took, limit)
	}
	var run conformance.Run
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatalf("exit %d, unreadable --json (%v):\n%s\nstderr: %s", code, err, out, errs)
	}
	if code != want {
		t.Fatalf("exit %d, want %d\n%s\nstderr: %s", code, want, summary(run), errs)
	}
	return run
}

func summary(run conformance.Run) string {
	var b bytes.Buffer
	_ = run.WriteText(&b)
	return b.String()
}

func sharedPack(t *testing.T) string { return sharedtest.Path(t, "ewp-pack") }

// pack reads the reference pack's cases, for the tests' own expectations.
func packCases(t *testing.T) []conformance.Case {
	t.Helper()
	cases, err := conformance.LoadPack(sharedPack(t))
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// failedCases lists "Section/case" of every failed result, by class.
func failedCases(run conformance.Run) map[conformance.Class][]string {
	out := map[conformance.Class][]string{}
	for _, r := range run.Results {
		if r.Failed() {
			out[r.Class] = append(out[r.Class], r.Section+"/"+r.Case)
		}
	}
	return out
}

// casesWhere lists "Section/case" of the pack's cases whose kernel answer
// satisfies keep (refused documents never do).
func casesWhere(t *testing.T, keep func(wv map[string]any) bool) []string {
	var out []string
	for _, c := range packCases(t) {
		a, _ := conformance.Kernel().Evaluate(t.Context(), c.Doc)
		if a.View != nil && keep(a.View) {
			out = append(out, c.Section+"/"+c.Name)
		}
	}
	return out
}

func TestEvalTargetOwnBinaryIsConformant(t *testing.T) {
	bin := binaries(t)
	corpus := sharedtest.Path(t, "ewp-differential", "public.jsonl.gz")
	junit := filepath.Join(t.TempDir(), "report.xml")
	run := judged(t, 0, time.Minute, "--target", "eval:'"+filepath.Join(bin, "ewp-conformance")+"' eval",
		"--pack", sharedPack(t), "--corpus", corpus, "--corpus-limit", "300", "--junit", junit)
	if !run.Conformant || run.Classes[conformance.Pass] != 113+300 {
		t.Fatalf("want 413 PASS:\n%s", summary(run))
	}
	suites := readJUnit(t, junit)
	if suites.Tests != 413 || suites.Failures != 0 || len(suites.Suites) != 6 {
		t.Errorf("JUnit: %d tests, %d failures, %d suites; want 413, 0, 6", suites.Tests, suites.Failures, len(suites.Suites))
	}
}

// An implementation that says TENTATIVE wherever the protocol says
// ACCEPTED fails exactly those cases, WARRANT_MISMATCH on
// warrant.acceptance with both values, and JUnit carries the class.
func TestEvalTargetFlippedAxis(t *testing.T) {
	t.Setenv(fakeEnv, "flip")
	junit := filepath.Join(t.TempDir(), "report.xml")
	run := judged(t, 1, 30*time.Second, "--target", "eval:"+os.Args[0], "--pack", sharedPack(t), "--junit", junit)
	want := casesWhere(t, func(wv map[string]any) bool { return wv["warrant"].(map[string]any)["acceptance"] == "ACCEPTED" })
	got := failedCases(run)
	if len(got) != 1 || !slices.Equal(got[conformance.WarrantMismatch], want) || len(want) == 0 {
		t.Fatalf("failed %v, want WARRANT_MISMATCH on exactly %v", got, want)
	}
	for _, r := range run.Results {
		if r.Failed() && !slices.Contains(r.Findings, conformance.Finding{Class: conformance.WarrantMismatch,
			Path: "warrant.acceptance", Expected: `"ACCEPTED"`, Got: `"TENTATIVE"`}) {
			t.Errorf("%s: findings %+v lack the acceptance diff", r.Case, r.Findings)
		}
	}
	suites := readJUnit(t, junit)
	failures := 0
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
				if c.Failure.Type != "WARRANT_MISMATCH" || !strings.Contains(c.Failure.Message, `warrant.acceptance: expected "ACCEPTED", got "TENTATIVE"`) {
					t.Errorf("JUnit failure of %s: %+v", c.Name, c.Failure)
				}
			}
		}
	}
	if failures != len(want) || suites.Failures != len(want) {
		t.Errorf("JUnit has %d failures (attribute %d), want %d", failures, suites.Failures, len(want))
	}
}

// An implementation that hangs, crashes or prints garbage on one
// document fails exactly the cases of that document, TIMEOUT or CRASH,
// within bounded time; it is restarted and every other case passes.
func TestEvalTargetMisbehavesOnOneDocument(t *testing.T) {
	on := firstViewID(t)
	want := casesWhere(t, func(wv map[string]any) bool { return wv["view_id"] == on })
	for mode, class := range map[string]conformance.Class{"hang": conformance.Timeout, "garbage": conformance.Crash, "exit": conformance.Crash} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(fakeEnv, mode)
			t.Setenv(fakeOnEnv, on)
			run := judged(t, 1, 20*time.Second, "--target", "eval:"+os.Args[0], "--pack", sharedPack(t), "--timeout", "400ms")
			got := failedCases(run)
			if len(got) != 1 || !slices.Equal(got[class], want) {
				t.Fatalf("failed %v, want %s on exactly %v\n%s", got, class, want, summary(run))
			}
			var text bytes.Buffer
			_ = run.WriteText(&text)
			if strings.ContainsRune(text.String(), 0x1b) {
				t.Error("the garbage's escape sequence reached the text report")
			}
		})
	}
}

func firstViewID(t *testing.T) string {
	for _, c := range packCases(t) {
		if a, _ := conformance.Kernel().Evaluate(t.Context(), c.Doc); a.View != nil {
			return a.View["view_id"].(string)
		}
	}
	t.Fatal("no evaluable case")
	return ""
}

// A store that returns a view without its evidence content fails, as
// RETRIEVAL_LOSS with the field path and both values, exactly the cases
// whose view has evidence.
func TestMCPTargetDroppingStore(t *testing.T) {
	t.Setenv(fakeEnv, "dropping-store")
	run := judged(t, 1, 30*time.Second, "--target", "mcp-stdio:"+os.Args[0], "--pack", sharedPack(t))
	want := casesWhere(t, func(wv map[string]any) bool {
		return len(wv["supporting_evidence_ids"].([]any))+len(wv["opposing_evidence_ids"].([]any)) > 0
	})
	got := failedCases(run)
	if len(got) != 1 || !slices.Equal(got[conformance.RetrievalLoss], want) || len(want) == 0 {
		t.Fatalf("failed %v, want RETRIEVAL_LOSS on exactly %v\n%s", got, want, summary(run))
	}
	for _, r := range run.Results {
		if !r.Failed() {
			continue
		}
		f := r.Findings[0]
		if f.Class != conformance.RetrievalLoss || !strings.HasPrefix(f.Path, "view.evidence[") || !strings.HasSuffix(f.Path, "].content") ||
			f.Got != `"<absent>"` || !strings.HasPrefix(f.Expected, `"`) {
			t.Errorf("%s: first finding %+v, want view.evidence[i].content with both values", r.Case, f)
		}
	}
}

// The project's own MCP server is conformant through the runner's MCP
// client, under its own tool names and the reference's, with every
// valid view stored, read back and evaluated from the store.
func TestMCPStdioOwnServerIsConformant(t *testing.T) {
	bin := binaries(t)
	for _, names := range []string{"", " --tool-names reference"} {
		t.Run("names"+names, func(t *testing.T) {
			serve := `sh -c "` + filepath.Join(bin, "ewp-ingest") + ` init --db {tmp}/l.db >/dev/null 2>&1 && exec ` +
				filepath.Join(bin, "ewp-mcp") + ` --db {tmp}/l.db --allow-ingest --audit off` + names + `"`
			run := judged(t, 0, time.Minute, "--target", "mcp-stdio:"+serve, "--pack", sharedPack(t))
			if run.Classes[conformance.Pass] != 112 || run.Classes[conformance.Skipped] != 1 {
				t.Fatalf("want 112 PASS and the one non-JSON document SKIPPED:\n%s", summary(run))
			}
			for _, r := range run.Results {
				for _, o := range r.Observations {
					if o.Class == conformance.Skipped {
						t.Errorf("%s: stored stages not judged: %s", r.Case, o.Detail)
					}
				}
			}
		})
	}
}

// JUnit XML in the Ant/Jenkins schema, read back with encoding/xml into
// structs of that schema (independent of the writer's own types).
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d junitDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("JUnit XML unreadable: %v\n%s", err, b)
	}
	return d
}

// Every command answers --version with the protocol, the policy and the
// release lock it was built with.
func TestEveryCommandAnswersVersion(t *testing.T) {
	bin := binaries(t)
	lock, err := release.Read("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ewp-conformance", "ewp-mcp", "ewp-ingest"} {
		out, err := exec.Command(filepath.Join(bin, name), "--version").CombinedOutput()
		text := string(out)
		if err != nil || !strings.HasPrefix(text, name+": protocol EWP-0.2.0, policy reference-v2\n") ||
			!strings.Contains(text, "version "+lock.Version+", digest "+lock.Digest) || !strings.Contains(text, lock.Sets[release.GuardSet]) {
			t.Errorf("%s --version: %v\n%s", name, err, text)
		}
	}
}

// check_grounding of an MCP server holding the filesystem graph answers
// that graph's cases of the grounding pack as the pack says; the cases on
// other graphs are skipped, never failed.
func TestMCPStdioGrounding(t *testing.T) {
	bin := binaries(t)
	graph := sharedtest.Path(t, "vre-pack", "filesystem.json")
	serve := `sh -c "` + filepath.Join(bin, "ewp-ingest") + ` --db {tmp}/l.db '` + graph + `' >/dev/null 2>&1 && exec ` +
		filepath.Join(bin, "ewp-mcp") + ` --db {tmp}/l.db --audit off"`
	run := judged(t, 0, time.Minute, "--target", "mcp-stdio:"+serve, "--pack", "",
		"--grounding", sharedtest.Path(t, "vre-pack", "cases.json"), "--grounding-graph", "filesystem")
	if run.Classes[conformance.Pass] != 8 || run.Classes[conformance.Skipped] != 69 {
		t.Fatalf("want the 8 filesystem cases PASS, 69 SKIPPED:\n%s", summary(run))
	}
}

// An implementation that answers one document twice is out of step: the
// extra line is reported as a CRASH on a following case (the next, or the
// one after if the runner read the extra line as the next answer), the
// program is restarted, and the cases after that pass again.
func TestEvalTargetAnswersTwice(t *testing.T) {
	on := firstViewID(t)
	doubled := casesWhere(t, func(wv map[string]any) bool { return wv["view_id"] == on })
	t.Setenv(fakeEnv, "double")
	t.Setenv(fakeOnEnv, on)
	run := judged(t, 1, 20*time.Second, "--target", "eval:"+os.Args[0], "--pack", sharedPack(t), "--timeout", "2s")
	var hits []int
	for i, r := range run.Results {
		if slices.Contains(doubled, r.Section+"/"+r.Case) {
			hits = append(hits, i)
		}
	}
	for _, h := range hits {
		if run.Results[h].Class != conformance.Pass {
			t.Errorf("%s, answered (twice) correctly: %s", run.Results[h].Case, run.Results[h].Class)
		}
		crashed := false
		for i := h + 1; i <= h+2 && i < len(run.Results); i++ {
			r := run.Results[i]
			crashed = crashed || (r.Class == conformance.Crash && strings.Contains(r.Findings[0].Detail, "before this document was sent"))
		}
		if !crashed && h+1 < len(run.Results) {
			t.Errorf("the extra line after %s was not reported as a CRASH", run.Results[h].Case)
		}
	}
	for i, r := range run.Results {
		near := slices.ContainsFunc(hits, func(h int) bool { return h < i && i <= h+2 })
		if r.Failed() && !near {
			t.Errorf("case %d %s: %s; only the two cases after a doubled answer may fail", i, r.Case, r.Class)
		}
	}
}

// An MCP server over Streamable HTTP is judged through mcp:URL, writing
// with the ingest token from EWP_INGEST_TOKEN. One store serves the whole
// run, so the cases that collide with an earlier case's records are
// judged inline only, and say so.
func TestMCPHTTPTarget(t *testing.T) {
	bin := binaries(t)
	db := filepath.Join(t.TempDir(), "l.db")
	ingest := exec.Command(filepath.Join(bin, "ewp-ingest"), "init", "--db", db)
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ewp-ingest: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	token := strings.Repeat("k", 40)
	srv := exec.Command(filepath.Join(bin, "ewp-mcp"), "--db", db, "--http", addr, "--audit", "off")
	srv.Env = append(os.Environ(), "EWP_INGEST_TOKEN="+token)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ewp-mcp --http did not start listening")
		}
	}
	t.Setenv("EWP_INGEST_TOKEN", token)
	run := judged(t, 0, time.Minute, "--target", "mcp:http://"+addr+"/mcp", "--pack", sharedPack(t))
	if run.Classes[conformance.Pass] != 112 || run.Classes[conformance.Skipped] != 1 {
		t.Fatalf("want 112 PASS and the one non-JSON document SKIPPED:\n%s", summary(run))
	}
	stored := 0
	for _, r := range run.Results {
		if r.Section != conformance.Invalid && r.Class == conformance.Pass && !slices.ContainsFunc(r.Observations, func(o conformance.Finding) bool { return o.Class == conformance.Skipped }) {
			stored++
		}
	}
	if stored < 20 {
		t.Errorf("only %d valid cases were judged through the store", stored)
	}
}
