package jsonstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// tempDir is a fresh directory, on tmpfs when the machine has one: the
// corpus round trip creates thousands of stores, and every commit fsyncs.
// The code exercised is the same on any file system.
func tempDir(t testing.TB) string {
	t.Helper()
	if d, err := os.MkdirTemp("/dev/shm", "ewp-jsonstore-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := Create(filepath.Join(tempDir(t), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustView(t testing.TB, js string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(js))
	if err != nil {
		t.Fatalf("test view does not decode: %v\n%s", err, js)
	}
	return v
}

func mustPut(t testing.TB, s *Store, views ...*warrant.View) PutResult {
	t.Helper()
	res, err := s.Put(context.Background(), views)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustVerify(t testing.TB, s *Store) VerifyReport {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}
