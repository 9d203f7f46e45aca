// Package auditsource adapts the SQLite decision log (audit/sqlite) to what
// the console needs beyond audit.Log: walking its chain on demand.
package auditsource

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
)

// Verify returns the console's LogVerifyFunc for l: the whole chain walked,
// summarised as `ewp-audit verify` counts it.
func Verify(l *sqlite.Log) console.LogVerifyFunc {
	return func(ctx context.Context) (string, error) {
		rep, err := l.Verify(ctx)
		sum := fmt.Sprintf("%d events, %d decisions, %d approvals, %d uses; head %s", rep.Events, rep.Decisions, rep.Approvals, rep.Uses, rep.Head)
		return sum, err
	}
}
