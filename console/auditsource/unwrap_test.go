package auditsource_test

import (
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/audit/notify"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console/auditsource"
)

// TestForSeesThroughADecorator: a store wrapped by audit/notify (as
// ewp-mcp --notify-url wraps it) keeps the console's extras.
func TestForSeesThroughADecorator(t *testing.T) {
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "x.audit"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(notify.Config{URL: "http://127.0.0.1:9/", Secret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := notify.Wrap(l, n)
	defer wrapped.Close()
	x := auditsource.For(wrapped)
	if x.LogVerify == nil || x.ListNewest == nil || x.Presented == nil {
		t.Fatal("the console lost the store's extras behind the notifying decorator")
	}
}
