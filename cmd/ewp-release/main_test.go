package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "lock" writes a versioned lock, refuses to rewrite a changed hash under
// the same version (leaving the lock as it was), and takes a new version.
func TestLockRefusesChangeWithoutVersion(t *testing.T) {
	root := t.TempDir()
	policy := filepath.Join(root, "warrant", "policy.json")
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(args, root, &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := cmd("lock"); code != 2 || !strings.Contains(out, "--version") {
		t.Fatalf("first lock without a version: %d %s", code, out)
	}
	if code, out := cmd("lock", "--version", "1.0.0"); code != 0 {
		t.Fatalf("lock: %d %s", code, out)
	}
	before, _ := os.ReadFile(filepath.Join(root, "RELEASE.lock.json"))
	if err := os.WriteFile(policy, []byte(`{"a":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := cmd("check"); code != 1 || !strings.Contains(out, "changed: warrant/policy.json") {
		t.Errorf("check after an edit: %d %s", code, out)
	}
	if code, out := cmd("lock"); code != 1 || !strings.Contains(out, "policy_set_sha256 changed") {
		t.Errorf("relock under the same version: %d %s", code, out)
	}
	if after, _ := os.ReadFile(filepath.Join(root, "RELEASE.lock.json")); !bytes.Equal(before, after) {
		t.Error("a refused lock rewrote the file")
	}
	if code, out := cmd("lock", "--version", "1.1.0"); code != 0 || !strings.Contains(out, "version 1.1.0") {
		t.Errorf("lock with a new version: %d %s", code, out)
	}
	if code, out := cmd("--version"); code != 0 || !strings.Contains(out, "protocol EWP-0.2.0, policy reference-v2") || !strings.Contains(out, "guard_set_sha256") {
		t.Errorf("--version: %d %s", code, out)
	}
}

// Run from a sub directory of the checkout, check finds the repository
// root and passes; run outside any checkout, it says where to run rather
// than failing on the first pinned file it cannot find.
func TestCheckFindsTheRoot(t *testing.T) {
	t.Chdir("../../warrant")
	var out, errb bytes.Buffer
	if code := run([]string{"check"}, "", &out, &errb); code != 0 {
		t.Fatalf("check from warrant/: %d %s%s", code, out.String(), errb.String())
	}
	t.Chdir(t.TempDir())
	out.Reset()
	errb.Reset()
	code := run([]string{"check"}, "", &out, &errb)
	if msg := errb.String(); code != 2 || !strings.Contains(msg, "run ewp-release in the repository root") || strings.Contains(msg, "lstat") {
		t.Fatalf("check outside the repository: %d %s", code, msg)
	}
}
