// Package release pins the behaviour of a release: RELEASE.lock.json holds
// the sha256 of every file that decides a warrant (the evaluator sources,
// the policy file, the project's fixture pack and goldens). A test compares
// the tree with the lock, so behaviour cannot drift without someone running
// `ewp-release lock` on purpose and committing the new lock.
package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// LockFile is the lock's name at the repository root.
const LockFile = "RELEASE.lock.json"

// Lock is the content of RELEASE.lock.json.
type Lock struct {
	Protocol string            `json:"protocol"`
	Policy   string            `json:"policy"`
	Digest   string            `json:"digest"`
	Files    map[string]string `json:"files"`
}

// pinned lists what the lock covers, relative to the repository root:
// every non-test Go file of the evaluator, its policy file, and the
// project's own pack.
func pinned(path string, d fs.DirEntry) bool {
	if d.IsDir() {
		return false
	}
	switch {
	case strings.HasPrefix(path, "warrant/"):
		return (strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")) || path == "warrant/policy.json"
	case strings.HasPrefix(path, "fixtures/pack/"):
		return true
	}
	return false
}

// Compute hashes the pinned files under root.
func Compute(root string) (*Lock, error) {
	l := &Lock{Protocol: warrant.ProtocolVersion, Policy: warrant.PolicyID, Files: map[string]string{}}
	for _, dir := range []string{"warrant", "fixtures/pack"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if !pinned(rel, d) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			l.Files[rel] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	l.Digest = l.digest()
	return l, nil
}

func (l *Lock) digest() string {
	names := make([]string, 0, len(l.Files))
	for n := range l.Files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s  %s\n", l.Files[n], n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Read loads the committed lock from root.
func Read(root string) (*Lock, error) {
	b, err := os.ReadFile(filepath.Join(root, LockFile))
	if err != nil {
		return nil, err
	}
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err)
	}
	return &l, nil
}

// Write stores l as root/RELEASE.lock.json.
func Write(root string, l *Lock) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, LockFile), append(b, '\n'), 0o644)
}

// Diff lists, one line each, the files added, removed or changed between
// the committed lock and the tree.
func Diff(committed, current *Lock) []string {
	var out []string
	for n, h := range current.Files {
		switch old, ok := committed.Files[n]; {
		case !ok:
			out = append(out, "added:   "+n)
		case old != h:
			out = append(out, "changed: "+n)
		}
	}
	for n := range committed.Files {
		if _, ok := current.Files[n]; !ok {
			out = append(out, "removed: "+n)
		}
	}
	slices.Sort(out)
	return out
}
