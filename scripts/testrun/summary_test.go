package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// recorded is `go test -json` output, as go 1.26 writes it, for a run
// with a passing package holding skips of every kind, a package without
// tests, a failing test and a package that does not build.
const recorded = `{"Action":"start","Package":"github.com/ewp-go/ewp/audit/postgres"}
{"Action":"run","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestStore"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestStore","Output":"=== RUN   TestStore\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestStore","Output":"    pgtest.go:97: no PostgreSQL: initdb not found under /usr/lib/postgresql/*/bin; the PostgreSQL store is NOT tested here\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestStore","Output":"--- SKIP: TestStore (0.00s)\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestStore","Elapsed":0}
{"Action":"run","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestOutage"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestOutage","Output":"    pgtest.go:97: no PostgreSQL: initdb not found under /usr/lib/postgresql/*/bin; the PostgreSQL store is NOT tested here\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestOutage","Elapsed":0}
{"Action":"run","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestChild"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestChild","Output":"    x_test.go:9: helper process: run by TestOutage\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/audit/postgres","Test":"TestChild","Elapsed":0}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Output":"PASS\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/audit/postgres","Output":"ok  \tgithub.com/ewp-go/ewp/audit/postgres\t0.012s\n"}
{"Action":"pass","Package":"github.com/ewp-go/ewp/audit/postgres","Elapsed":0.012}
{"Action":"start","Package":"github.com/ewp-go/ewp/console"}
{"Action":"run","Package":"github.com/ewp-go/ewp/console","Test":"TestBrowser"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestBrowser","Output":"    browser_test.go:31: no chromium: no chromium binary on PATH\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/console","Test":"TestBrowser","Elapsed":0}
{"Action":"run","Package":"github.com/ewp-go/ewp/console","Test":"TestPages/corpus"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestPages/corpus","Output":"    sharedtest.go:34: no ../shared: not found at /x/shared\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/console","Test":"TestPages/corpus","Elapsed":0}
{"Action":"run","Package":"github.com/ewp-go/ewp/console","Test":"TestSlow"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestSlow","Output":"    perf_test.go:82: -short: builds a ledger\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/console","Test":"TestSlow","Elapsed":0}
{"Action":"run","Package":"github.com/ewp-go/ewp/console","Test":"TestBroken"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestBroken","Output":"    page_test.go:12: got 500, want 200\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.01s)\n"}
{"Action":"fail","Package":"github.com/ewp-go/ewp/console","Test":"TestBroken","Elapsed":0.01}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Output":"FAIL\n"}
{"Action":"output","Package":"github.com/ewp-go/ewp/console","Output":"FAIL\tgithub.com/ewp-go/ewp/console\t0.020s\n"}
{"Action":"fail","Package":"github.com/ewp-go/ewp/console","Elapsed":0.02}
{"Action":"start","Package":"github.com/ewp-go/ewp/fixtures"}
{"Action":"output","Package":"github.com/ewp-go/ewp/fixtures","Output":"?   \tgithub.com/ewp-go/ewp/fixtures\t[no test files]\n"}
{"Action":"skip","Package":"github.com/ewp-go/ewp/fixtures","Elapsed":0}
{"ImportPath":"github.com/ewp-go/ewp/mcp [github.com/ewp-go/ewp/mcp.test]","Action":"build-output","Output":"# github.com/ewp-go/ewp/mcp [github.com/ewp-go/ewp/mcp.test]\n"}
{"ImportPath":"github.com/ewp-go/ewp/mcp [github.com/ewp-go/ewp/mcp.test]","Action":"build-output","Output":"mcp/x_test.go:3:28: undefined: nope\n"}
{"ImportPath":"github.com/ewp-go/ewp/mcp [github.com/ewp-go/ewp/mcp.test]","Action":"build-fail"}
{"Action":"start","Package":"github.com/ewp-go/ewp/mcp"}
{"Action":"output","Package":"github.com/ewp-go/ewp/mcp","Output":"FAIL\tgithub.com/ewp-go/ewp/mcp [build failed]\n"}
{"Action":"fail","Package":"github.com/ewp-go/ewp/mcp","Elapsed":0,"FailedBuild":"github.com/ewp-go/ewp/mcp [github.com/ewp-go/ewp/mcp.test]"}
`

func summarise(t *testing.T, in string) (*summary, string) {
	t.Helper()
	var out bytes.Buffer
	s := newSummary(&out)
	if err := s.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	s.write()
	return s, out.String()
}

// Go test's closing lines, failures in full and build errors pass
// through; -v's progress lines and passing packages' chatter do not; the
// summary names every skip under its reason, the tagged reasons first
// with what to install; the run failed.
func TestSummary(t *testing.T) {
	s, out := summarise(t, recorded)
	if !s.failed() {
		t.Error("a failed test and a failed build: the run failed")
	}
	for _, want := range []string{
		"ok  \tgithub.com/ewp-go/ewp/audit/postgres\t0.012s\n",
		"    page_test.go:12: got 500, want 200\n--- FAIL: TestBroken (0.01s)\n",
		"FAIL\tgithub.com/ewp-go/ewp/console\t0.020s\n",
		"?   \tgithub.com/ewp-go/ewp/fixtures\t[no test files]\n",
		"mcp/x_test.go:3:28: undefined: nope\n",
		"FAIL\tgithub.com/ewp-go/ewp/mcp [build failed]\n",
		"SKIPPED: 6 tests did not run, by reason:\n" +
			"  PostgreSQL not found (install postgresql: the tests start their own throwaway clusters; or set EWP_TEST_POSTGRES_URL): 2\n" +
			"    (initdb not found under /usr/lib/postgresql/*/bin; the PostgreSQL store is NOT tested here)\n" +
			"    audit/postgres: TestStore, TestOutage\n" +
			"  chromium not found (install Debian's chromium: apt-get install -y chromium): 1\n" +
			"    (no chromium binary on PATH)\n" +
			"    console: TestBrowser\n" +
			"  ../shared absent",
		"    console: TestPages/corpus\n",
		"  helper processes (each runs when its parent test starts it; nothing is missing): 1\n    audit/postgres: TestChild\n",
		"  -short: builds a ledger: 1\n    console: TestSlow\n",
		"FAILED: 2\n  github.com/ewp-go/ewp/console TestBroken\n  github.com/ewp-go/ewp/mcp\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"=== RUN", "PASS\n", "pgtest.go:97"} {
		if strings.Contains(out, not) {
			t.Errorf("output has %q:\n%s", not, out)
		}
	}
	if !strings.HasSuffix(out, "\nFAIL\n") {
		t.Errorf("the last line is not FAIL:\n%s", out)
	}
}

// A clean run says so, and is not a failure.
func TestSummaryAllPassed(t *testing.T) {
	in := `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`
	s, out := summarise(t, in)
	if s.failed() || out != "ok  \tp\t0.1s\nok (nothing skipped)\n" {
		t.Fatalf("failed=%v\n%q", s.failed(), out)
	}
}

// A package is added only when none is named; a flag's value is not a
// package.
func TestGoTestArgs(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{"test", "-json", "./..."}},
		{[]string{"-count=1"}, []string{"test", "-json", "-count=1", "./..."}},
		{[]string{"-run", "TestX"}, []string{"test", "-json", "-run", "TestX", "./..."}},
		{[]string{"-run", "TestX", "./mcp"}, []string{"test", "-json", "-run", "TestX", "./mcp"}},
		{[]string{"./audit/..."}, []string{"test", "-json", "./audit/..."}},
	} {
		if got := goTestArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("goTestArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
