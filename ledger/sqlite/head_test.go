package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

func TestVerifyHead(t *testing.T) {
	ctx := context.Background()
	path := tamperLedger(t)
	l, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	kept, err := l.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.VerifyHead(ctx, kept); err != nil {
		t.Fatalf("the ledger's own head: %v", err)
	}
	wrong := kept
	wrong.Hash = strings.Repeat("0", 64)
	var brk *ledger.Break
	if err := l.VerifyHead(ctx, wrong); !errors.As(err, &brk) || !strings.Contains(brk.What, "does not match") {
		t.Fatalf("wrong hash: %v", err)
	}
	// A ledger that grew since the head was kept still holds it.
	put(t, l, decode(t, viewP))
	if err := l.VerifyHead(ctx, kept); err != nil {
		t.Fatalf("grown ledger: %v", err)
	}
	beyond := ledger.Head{Seq: kept.Seq + 5, Hash: kept.Hash}
	if err := l.VerifyHead(ctx, beyond); !errors.As(err, &brk) || !strings.Contains(brk.What, "cut off") {
		t.Fatalf("seq beyond the end: %v", err)
	}
}

// The cut-off tail that Verify alone cannot see (events, rows and derived
// rows all removed) is caught against a head kept before the cut.
func TestVerifyHeadCatchesCutTail(t *testing.T) {
	ctx := context.Background()
	path := tamperLedger(t)
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := l.Head(ctx)
	l.Close()
	db := rawDB(t, path)
	editCarefully(t, db, `DELETE FROM events WHERE seq = 7`, `DELETE FROM primitive_revisions`)
	db.Close()
	l, err = sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	if err != nil || rep.Head.Seq != 6 {
		t.Fatalf("the shortened ledger should verify on its own: %+v %v", rep, err)
	}
	var brk *ledger.Break
	if err := l.VerifyHead(ctx, kept); !errors.As(err, &brk) || !strings.Contains(brk.What, "ends at event 6") {
		t.Fatalf("cut tail against the kept head: %v", err)
	}
}
