package ingest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ewp-go/ewp/ledger"
)

// ledgerFactory hands out fresh ledgers cheaply: it creates one empty
// ledger and copies its file for each test, on tmpfs when the machine has
// one. A corpus round trip needs a ledger per document (documents of one
// proposition reuse record ids with other content, which one ledger would
// rightly refuse), and creating thousands of ledgers with fsyncs on a disk
// would take minutes. The ledger code exercised is the same.
type ledgerFactory struct {
	dir      string
	template []byte
	n        int
}

func newFactory(t testing.TB) *ledgerFactory {
	t.Helper()
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "ewp-test-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	tpl := filepath.Join(dir, "template.db")
	l, err := ledger.Create(tpl, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, err := os.ReadFile(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return &ledgerFactory{dir: dir, template: data}
}

// fresh returns an empty ledger and a function that closes and deletes it.
func (f *ledgerFactory) fresh(t testing.TB) (*ledger.Ledger, func()) {
	t.Helper()
	f.n++
	p := filepath.Join(f.dir, "l"+strconv.Itoa(f.n)+".db")
	if err := os.WriteFile(p, f.template, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l, func() {
		l.Close()
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(p + s)
		}
	}
}
