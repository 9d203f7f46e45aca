package postgres_test

import (
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// TestActionReadsNeverLagThePrimary is issue #13's rule for may_act: with
// the standby's replay paused and a new snapshot written on the primary,
// the action path (LatestForAction, LatestViewIDForAction) sees the new
// snapshot while a read from the standby still sees the old one; a read
// with MaxLag set falls back to the primary; once replay resumes the
// standby has it too.
func TestActionReadsNeverLagThePrimary(t *testing.T) {
	ctx := ctxT(t)
	primary, url := newLedger(t)
	view := func(snap int) *warrant.View {
		v, err := warrant.DecodeView(snapshottest.SyntheticView(0, snap))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	put := func(v *warrant.View) {
		if _, err := primary.Put(ctx, []*warrant.View{v}); err != nil {
			t.Fatal(err)
		}
	}
	v0, v1 := view(0), view(1)
	put(v0)

	sb := pgtest.Get(t).Standby(t)
	standby, err := postgres.Open(ctx, sb.On(url), postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	r := postgres.NewReadRouter(primary, standby, postgres.RouteOptions{})
	strict := postgres.NewReadRouter(primary, standby, postgres.RouteOptions{MaxLag: 1})
	latest := func(what string, get func() (*warrant.View, error), want *warrant.View) {
		t.Helper()
		v, err := get()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if v.ViewID != want.ViewID {
			t.Fatalf("%s sees view %s, want %s", what, v.ViewID, want.ViewID)
		}
	}
	prop := v0.PropositionID
	latest("standby read, caught up", func() (*warrant.View, error) { return r.Latest(ctx, prop) }, v0)

	sb.PauseReplay(t)
	put(v1)
	latest("the action path", func() (*warrant.View, error) { return r.LatestForAction(ctx, prop) }, v1)
	if id, err := r.LatestViewIDForAction(ctx, prop); err != nil || id != v1.ViewID {
		t.Fatalf("the action path's view id: %q %v, want %s", id, err, v1.ViewID)
	}
	latest("a read from the paused standby", func() (*warrant.View, error) { return r.Latest(ctx, prop) }, v0)
	if r.Reader(ctx) != standby {
		t.Fatal("without MaxLag the read path should take the standby")
	}
	lag, err := r.Lag(ctx)
	if err != nil || lag <= 0 {
		t.Fatalf("lag of a paused standby after a write: %d %v", lag, err)
	}
	t.Logf("paused standby is %d bytes of WAL behind", lag)
	latest("a read with MaxLag", func() (*warrant.View, error) { return strict.Latest(ctx, prop) }, v1)

	sb.ResumeReplay(t)
	sb.WaitCaughtUp(t)
	latest("the standby after resuming", func() (*warrant.View, error) { return r.Latest(ctx, prop) }, v1)
	if _, err := postgres.NewReadRouter(primary, primary, postgres.RouteOptions{}).Lag(ctx); err == nil {
		t.Fatal("a primary given as the standby measured a lag")
	}
}
