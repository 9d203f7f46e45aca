package gate

import (
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

func codeOf(err error) string {
	var we *warrant.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return ""
}

// A caller's evaluated_at is tolerated within MaxEvaluatedAtSkew of the
// gate's clock, never beyond, and never when it is no instant at all.
func TestCheckSkew(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for at, want := range map[string]string{
		"":                          "",
		"2026-01-02T03:04:05Z":      "",
		"2026-01-02T03:09:05Z":      "",
		"2026-01-02T03:09:06Z":      warrant.CodeEvaluatedAtSkew,
		"2026-01-02T02:59:04Z":      warrant.CodeEvaluatedAtSkew,
		"yesterday":                 warrant.CodeEvaluatedAtSkew,
		"2026-01-02T03:04:05+01:00": warrant.CodeEvaluatedAtSkew,
	} {
		if got := codeOf(CheckSkew(at, now)); got != want {
			t.Errorf("evaluated_at %q: code %q, want %q", at, got, want)
		}
	}
}

// A named view must be the latest snapshot.
func TestCheckLatest(t *testing.T) {
	latest := &warrant.View{ViewID: "V-2"}
	if err := CheckLatest("P-1", "", latest); err != nil {
		t.Errorf("no view named: %v", err)
	}
	if err := CheckLatest("P-1", "V-2", latest); err != nil {
		t.Errorf("the latest view: %v", err)
	}
	if got := codeOf(CheckLatest("P-1", "V-1", latest)); got != warrant.CodeStaleViewForAction {
		t.Errorf("a stale view: code %q", got)
	}
}
