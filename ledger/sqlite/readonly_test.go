package sqlite_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
)

// roLedger makes a ledger with some history in dir and closes it.
func roLedger(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ewp.db")
	l, err := sqlite.Create(path, sqlite.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	put(t, l, decode(t, viewP))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// chattr sets or clears the immutable attribute, which stops root too.
func chattr(t *testing.T, flag string, paths ...string) bool {
	t.Helper()
	out, err := exec.Command("chattr", append([]string{flag}, paths...)...).CombinedOutput()
	if err != nil {
		t.Logf("chattr %s: %v %s", flag, err, out)
		return false
	}
	return true
}

// readOnlyStorage returns ledgers on storage this process cannot write,
// in every form it can make here: an immutable file (directory writable),
// an immutable file in an immutable directory, and a read-only mount.
func readOnlyStorage(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	fileOnly := roLedger(t, t.TempDir())
	if chattr(t, "+i", fileOnly) {
		t.Cleanup(func() { chattr(t, "-i", fileOnly) })
		out["immutable file"] = fileOnly
	}
	dir := t.TempDir()
	both := roLedger(t, dir)
	if chattr(t, "+i", both, dir) {
		t.Cleanup(func() { chattr(t, "-i", dir, both) })
		out["immutable file and directory"] = both
	}
	if p := readOnlyMount(t); p != "" {
		out["read-only mount"] = p
	}
	if len(out) == 0 {
		t.Skip("SKIPPED LOUDLY: cannot make read-only storage here (chattr +i and mount -t tmpfs both failed; run as root on Linux) — the read-only ledger path is untested")
	}
	return out
}

// readOnlyMount copies a ledger onto a tmpfs mounted read-only; "" when
// this process may not mount.
func readOnlyMount(t *testing.T) string {
	t.Helper()
	return readOnlyMountOf(t, roLedger(t, t.TempDir()))
}

// readOnlyMountOf copies src (and its -wal, if any) onto a tmpfs mounted
// read-only.
func readOnlyMountOf(t *testing.T, src string) string {
	t.Helper()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Logf("mount tmpfs: %v %s", err, out)
		return ""
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	dst := filepath.Join(mnt, "ewp.db")
	copyFile(t, src, dst)
	if _, err := os.Stat(src + "-wal"); err == nil {
		copyFile(t, src+"-wal", dst+"-wal")
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Logf("remount ro: %v %s", err, out)
		return ""
	}
	return dst
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A ledger on storage this process cannot write is served read-only:
// reads, search and Verify work, and nothing is created beside it.
func TestReadOnlyStorage(t *testing.T) {
	ctx := context.Background()
	for name, path := range readOnlyStorage(t) {
		t.Run(name, func(t *testing.T) {
			l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer l.Close()
			if v, err := l.Latest(ctx, "P-db"); err != nil || v.ViewID != "v1" {
				t.Fatalf("latest: %v %v", v, err)
			}
			if ids := listIDs(t, l, "postgres"); len(ids) != 1 {
				t.Fatalf("list: %v", ids)
			}
			if rep, err := l.Verify(ctx); err != nil || rep.Snapshots != 1 {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			if h, err := l.Head(ctx); err != nil || h.Seq != 1 {
				t.Fatalf("head: %v %v", h, err)
			}
			// immutable=1 only where the -shm index cannot be created.
			if want := name != "immutable file"; l.Immutable() != want {
				t.Fatalf("Immutable() = %v, want %v", l.Immutable(), want)
			}
		})
	}
}

// A ledger whose -wal still holds commits cannot be read without the -shm
// index; on read-only storage it is refused with what to do, never served
// without those commits.
func TestReadOnlyStorageWithPendingWAL(t *testing.T) {
	l := newLedger(t) // stays open: its commits sit in the -wal
	put(t, l, decode(t, viewP))
	if st, err := os.Stat(l.Path() + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no pending WAL to test with: %v", err)
	}
	path := readOnlyMountOf(t, l.Path())
	if path == "" {
		t.Skip("SKIPPED LOUDLY: cannot mount a read-only tmpfs here (needs root) — the pending-WAL refusal is untested")
	}
	_, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "-wal holds commits") {
		t.Fatalf("open with a pending WAL on read-only storage: %v", err)
	}
}
