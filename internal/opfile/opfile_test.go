package opfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, info, err := Read(small, 7)
	if err != nil || string(b) != "secret\n" || info.Mode().Perm() != 0o600 {
		t.Fatalf("Read = %q, %v, %v", b, info, err)
	}
	if _, _, err := Read(small, 6); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 7-byte file under a 6-byte cap: %v, want ErrTooLarge", err)
	}
	if _, _, err := Read(dir, 1<<20); err == nil {
		t.Error("a directory was read as a file")
	}
	if _, _, err := Read(filepath.Join(dir, "absent"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
}

// A device that never ends (what a careless --token-file /dev/zero gives)
// is refused as not a regular file, not read until memory runs out.
func TestReadRefusesDevices(t *testing.T) {
	if _, _, err := Read("/dev/zero", MaxSecretBytes); err == nil {
		t.Error("/dev/zero was read")
	}
}
