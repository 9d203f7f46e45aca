// Command ewp-release writes or checks RELEASE.lock.json, the hash lock
// over the fixture set, the evaluator, its policy, the goldens, the
// implementer pack and the guard's code.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ewp-go/ewp/release"
)

const usage = `ewp-release — pin the files that decide a warrant.

Usage (anywhere in the repository; it finds the root):
  ewp-release check                 compare the tree with RELEASE.lock.json (exit 1 on drift)
  ewp-release lock [--version V]    rewrite RELEASE.lock.json from the tree
  ewp-release --version             the protocol, policy and lock this binary was built with

The lock pins, by name and sha256: fixture_set (fixtures/pack/fixtures and
expected), evaluator_set (warrant/*.go), policy_set (warrant/policy.json),
golden_set (fixtures/pack/goldens), implementer_pack (fixtures/pack and
conformance/PROTOCOL.md) and guard_set (grounding/*.go, edgepolicy/*.go),
and every file's own hash. "lock" refuses to change a set's hash under the
same version: a change of behaviour is a new release, so give --version
with the new one. Run it only after reviewing such a change.

Exit status: 0 done, 1 drift (check) or a changed hash without a new
version (lock), 2 usage or unreadable files.
`

func main() {
	os.Exit(run(os.Args[1:], "", os.Stdout, os.Stderr))
}

// modulePath names the repository whose files the lock pins.
const modulePath = "github.com/ewp-go/ewp"

// findRoot returns the repository root at or above dir: the directory
// whose go.mod declares modulePath. The lock names files relative to it,
// so run from anywhere inside the checkout it finds them; from outside,
// the error says where to run.
func findRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && declares(data, modulePath) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside the ewp repository (no go.mod of module %s at or above it); run ewp-release in the repository root, where %s is", abs, modulePath, release.LockFile)
		}
	}
}

// declares reports whether a go.mod's module line names path.
func declares(gomod []byte, path string) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == path
		}
	}
	return false
}

func run(args []string, root string, stdout, stderr io.Writer) int {
	if release.IsVersionFlag(args) {
		release.PrintVersion(stdout, "ewp-release")
		return 0
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if root == "" && (args[0] == "lock" || args[0] == "check") {
		found, err := findRoot(".")
		if err != nil {
			return fail(stderr, err)
		}
		root = found
	}
	switch args[0] {
	case "lock":
		return lock(args[1:], root, stdout, stderr)
	case "check":
		if len(args) > 1 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		return check(root, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprint(stderr, usage)
	return 2
}

func lock(args []string, root string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ewp-release lock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	current, err := release.Compute(root)
	if err != nil {
		return fail(stderr, err)
	}
	committed, err := release.Read(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(stderr, err)
	}
	current.Version = *version
	if current.Version == "" && committed != nil {
		current.Version = committed.Version
	}
	if current.Version == "" {
		return fail(stderr, errors.New("no version: give the release's version with --version, e.g. --version 0.2.0"))
	}
	if err := release.CheckVersion(committed, current); err != nil {
		fmt.Fprintln(stderr, "ewp-release: refused:", err)
		return 1
	}
	if err := release.Write(root, current); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "wrote %s: version %s, %d files, digest %s\n", release.LockFile, current.Version, len(current.Files), current.Digest[:16])
	return 0
}

func check(root string, stdout, stderr io.Writer) int {
	current, err := release.Compute(root)
	if err != nil {
		return fail(stderr, err)
	}
	committed, err := release.Read(root)
	if err != nil {
		return fail(stderr, err)
	}
	if d := release.Diff(committed, current); len(d) > 0 {
		fmt.Fprintf(stdout, "drift from %s:\n  %s\n", release.LockFile, strings.Join(d, "\n  "))
		return 1
	}
	fmt.Fprintf(stdout, "%s matches the tree (version %s, %d files)\n", release.LockFile, committed.Version, len(current.Files))
	return 0
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "ewp-release:", err)
	return 2
}
