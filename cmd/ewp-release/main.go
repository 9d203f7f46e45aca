// Command ewp-release writes or checks RELEASE.lock.json, the hash lock
// over the evaluator sources, its policy file and the project's pack.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ewp-go/ewp/release"
)

const usage = `ewp-release — pin the files that decide a warrant.

Usage (from the repository root):
  ewp-release check   compare the tree with RELEASE.lock.json (exit 1 on drift)
  ewp-release lock    rewrite RELEASE.lock.json from the tree

Run "lock" only after reviewing a deliberate change of behaviour: the
evaluator (warrant/*.go), warrant/policy.json, or fixtures/pack/.
`

func main() {
	if len(os.Args) != 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	current, err := release.Compute(".")
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "lock":
		if err := release.Write(".", current); err != nil {
			fail(err)
		}
		fmt.Printf("wrote %s: %d files, digest %s\n", release.LockFile, len(current.Files), current.Digest[:16])
	case "check":
		committed, err := release.Read(".")
		if err != nil {
			fail(err)
		}
		if d := release.Diff(committed, current); len(d) > 0 {
			fmt.Printf("drift from %s:\n  %s\n", release.LockFile, strings.Join(d, "\n  "))
			os.Exit(1)
		}
		fmt.Printf("%s matches the tree (%d files)\n", release.LockFile, len(current.Files))
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ewp-release:", err)
	os.Exit(2)
}
