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
	"errors"
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
	// Version is the release's own version: a set whose hash changes
	// needs a new one (CheckVersion).
	Version  string `json:"version"`
	Protocol string `json:"protocol"`
	Policy   string `json:"policy"`
	Digest   string `json:"digest"`
	// Sets are the named hashes the reference's lock keeps, plus the
	// guard's code: each the sha256 of its files' "hash  path" lines.
	Sets  map[string]string `json:"sets"`
	Files map[string]string `json:"files"`
}

// The named sets of the lock. A file may be in more than one.
const (
	FixtureSet      = "fixture_set_sha256"      // fixtures/pack/fixtures and expected
	EvaluatorSet    = "evaluator_set_sha256"    // warrant/*.go
	PolicySet       = "policy_set_sha256"       // warrant/policy.json
	GoldenSet       = "golden_set_sha256"       // fixtures/pack/goldens
	ImplementerPack = "implementer_pack_sha256" // the whole pack and the eval protocol
	GuardSet        = "guard_set_sha256"        // grounding/*.go and edgepolicy/*.go
)

// setOf names the sets a pinned file belongs to; none means it is not
// pinned. Tests are never pinned.
func setOf(path string) []string {
	goSource := strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
	switch {
	case path == "warrant/policy.json":
		return []string{PolicySet}
	case strings.HasPrefix(path, "warrant/") && goSource:
		return []string{EvaluatorSet}
	case (strings.HasPrefix(path, "grounding/") || strings.HasPrefix(path, "edgepolicy/")) && goSource:
		return []string{GuardSet}
	case path == ProtocolDoc:
		return []string{ImplementerPack}
	case strings.HasPrefix(path, "fixtures/pack/fixtures/"), strings.HasPrefix(path, "fixtures/pack/expected/"):
		return []string{FixtureSet, ImplementerPack}
	case strings.HasPrefix(path, "fixtures/pack/goldens/"):
		return []string{GoldenSet, ImplementerPack}
	case strings.HasPrefix(path, "fixtures/pack/"):
		return []string{ImplementerPack}
	}
	return nil
}

// ProtocolDoc is the eval protocol's contract, part of the implementer
// pack.
const ProtocolDoc = "conformance/PROTOCOL.md"

// pinnedDirs are walked for pinned files.
var pinnedDirs = []string{"warrant", "fixtures/pack", "grounding", "edgepolicy", "conformance"}

func pinned(path string, d fs.DirEntry) bool {
	return !d.IsDir() && len(setOf(path)) > 0
}

// Compute hashes the pinned files under root.
func Compute(root string) (*Lock, error) {
	l := &Lock{Protocol: warrant.ProtocolVersion, Policy: warrant.PolicyID, Files: map[string]string{}}
	for _, dir := range pinnedDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(root, dir) {
				return filepath.SkipDir
			}
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
	l.Digest = digest(l.Files, nil)
	l.Sets = map[string]string{}
	for _, set := range []string{FixtureSet, EvaluatorSet, PolicySet, GoldenSet, ImplementerPack, GuardSet} {
		l.Sets[set] = digest(l.Files, func(path string) bool { return slices.Contains(setOf(path), set) })
	}
	return l, nil
}

// digest is the sha256 of the "hash  path" lines of the files keep
// selects (all when nil), in path order.
func digest(files map[string]string, keep func(string) bool) string {
	names := make([]string, 0, len(files))
	for n := range files {
		if keep == nil || keep(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s  %s\n", files[n], n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckVersion refuses a new lock whose named sets changed while its
// version did not: a change of behaviour is a new release, never a
// silent rewrite of the old one's hashes.
func CheckVersion(committed, next *Lock) error {
	if committed == nil || committed.Version != next.Version {
		return nil
	}
	var changed []string
	for _, set := range sortedKeys(next.Sets) {
		if committed.Sets[set] != next.Sets[set] {
			changed = append(changed, set)
		}
	}
	if len(committed.Sets) == 0 && committed.Digest != next.Digest {
		changed = append(changed, "digest")
	}
	if len(changed) == 0 {
		return nil
	}
	return fmt.Errorf("version %q: %s changed; a changed hash needs a new version (ewp-release lock --version NEW)",
		next.Version, strings.Join(changed, ", "))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
