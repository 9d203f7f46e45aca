package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockMatchesTree fails whenever the evaluator, its policy or the
// project's pack changes without `go run ./cmd/ewp-release lock`.
func TestLockMatchesTree(t *testing.T) {
	committed, err := Read("..")
	if err != nil {
		t.Fatalf("reading the lock: %v (create it with `go run ./cmd/ewp-release lock`)", err)
	}
	current, err := Compute("..")
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(committed, current); len(d) > 0 || committed.Digest != current.Digest {
		t.Fatalf("behaviour-defining files differ from %s:\n  %s\nIf the change is intended, review it, then run `go run ./cmd/ewp-release lock` and commit the lock.",
			LockFile, strings.Join(d, "\n  "))
	}
}

// The lock notices any edit of a pinned file, and ignores tests.
func TestLockDetectsEdits(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("warrant/eval.go", "package warrant\n")
	write("warrant/eval_test.go", "package warrant\n")
	write("warrant/policy.json", "{}")
	write("fixtures/pack/expected/a.json", `{"acceptance":"ACCEPTED"}`)
	before, err := Compute(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Files) != 3 {
		t.Fatalf("pinned %d files, want 3 (tests are not pinned): %v", len(before.Files), before.Files)
	}
	write("warrant/eval_test.go", "package warrant // edited\n")
	if same, _ := Compute(root); same.Digest != before.Digest {
		t.Error("editing a test changed the lock")
	}
	write("fixtures/pack/expected/a.json", `{"acceptance":"TENTATIVE"}`)
	after, _ := Compute(root)
	if d := Diff(before, after); len(d) != 1 || d[0] != "changed: fixtures/pack/expected/a.json" || after.Digest == before.Digest {
		t.Errorf("diff %v", d)
	}
}

// The lock names the reference's five sets and the guard's code, and a
// changed set under the same version is refused.
func TestNamedSetsAndVersion(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("warrant/eval.go", "package warrant\n")
	write("warrant/policy.json", "{}")
	write("fixtures/pack/fixtures/a.json", `{}`)
	write("fixtures/pack/goldens/a.json", `{}`)
	write("grounding/check.go", "package grounding\n")
	write("conformance/PROTOCOL.md", "# eval\n")
	write("conformance/run.go", "package conformance\n")
	v1, err := Compute(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{FixtureSet, EvaluatorSet, PolicySet, GoldenSet, ImplementerPack, GuardSet} {
		if len(v1.Sets[set]) != 64 {
			t.Errorf("set %s missing: %v", set, v1.Sets)
		}
	}
	if _, ok := v1.Files["conformance/run.go"]; ok {
		t.Error("the runner's code is pinned; only the protocol document should be")
	}
	v1.Version = "1"
	write("grounding/check.go", "package grounding // changed\n")
	v2, _ := Compute(root)
	v2.Version = "1"
	err = CheckVersion(v1, v2)
	if err == nil || !strings.Contains(err.Error(), GuardSet) || strings.Contains(err.Error(), EvaluatorSet) {
		t.Fatalf("a changed guard under the same version: %v", err)
	}
	v2.Version = "2"
	if err := CheckVersion(v1, v2); err != nil {
		t.Errorf("a new version: %v", err)
	}
	same, _ := Compute(root)
	same.Version = "2"
	if err := CheckVersion(v2, same); err != nil {
		t.Errorf("an unchanged tree: %v", err)
	}
}
