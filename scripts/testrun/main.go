// Command testrun is the README's test command: it runs `go test -json`
// and prints what plain `go test` prints (each package's closing line,
// failures in full, build errors), then a summary that names every
// skipped test and why, grouped by reason. Plain `go test` shows a
// passing package's skips only with -v, so a newcomer without PostgreSQL,
// chromium or ../shared would not learn that those tests did not run.
//
//	go run ./scripts/testrun [go test flags] [packages]   (default ./...)
//
// It exits 1 when a test or a build failed, or go test itself did.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: go run ./scripts/testrun [go test flags] [packages]   (default ./...)")
		return 0
	}
	cmd := exec.Command("go", goTestArgs(args)...)
	cmd.Stderr = stderr // go's own messages (a pattern matching nothing, downloads)
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testrun:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testrun: cannot run go test:", err)
		return 1
	}
	s := newSummary(stdout)
	readErr := s.read(out)
	waitErr := cmd.Wait()
	s.write()
	switch {
	case readErr != nil:
		fmt.Fprintln(stderr, "testrun: reading go test's output:", readErr)
		return 1
	case s.failed():
		return 1
	case waitErr != nil:
		fmt.Fprintln(stdout, "FAIL: go test:", waitErr)
		return 1
	}
	return 0
}

// goTestArgs is `test -json` with the caller's flags and packages, and
// ./... when no package is named. A value-taking flag is written with
// "=" by convention here (-run=X), so anything not starting with "-"
// that does not follow such a flag is a package.
func goTestArgs(args []string) []string {
	out := append([]string{"test", "-json"}, args...)
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && (i == 0 || !takesValue(args[i-1])) {
			return out
		}
	}
	return append(out, "./...")
}

// takesValue reports whether a go test flag written without "=" takes
// the next argument as its value.
func takesValue(flag string) bool {
	if strings.Contains(flag, "=") {
		return false
	}
	switch strings.TrimLeft(flag, "-") {
	case "run", "skip", "count", "timeout", "bench", "benchtime", "p", "parallel", "cpu", "tags", "coverprofile", "fuzz", "fuzztime", "o", "exec", "ldflags", "gcflags":
		return true
	}
	return false
}
