package audit

import (
	"errors"
	"fmt"
	"time"
)

// ErrReplayExpired: a retry's idempotency key names a decision that may
// no longer be answered from the record (see Replayable).
var ErrReplayExpired = errors.New("audit: the recorded decision may no longer be replayed")

// DefaultReplayWindow is how long after a decision a retry with its
// idempotency key gets it back, when the server sets no other window:
// long enough for a client to retry an answer it lost, short enough that
// a recorded MAY_ACT does not become a standing permission.
const DefaultReplayWindow = 10 * time.Minute

// Replayable is the rule for answering a retry from the record: prev is
// the decision recorded under the retry's idempotency key, lifted the
// approval that lifted prev to MAY_ACT (nil when none did), as the gate
// honours it now (Capped), now the server clock and window the replay
// window (0: DefaultReplayWindow). A decision older than the window is
// not replayed, nor a MAY_ACT its approval could not give now (expired,
// or no longer covering it): a replay never outlives its approval. Both
// refusals are ErrReplayExpired, with why; the caller then uses a new
// key, and the call is decided afresh.
func Replayable(prev *Decision, lifted *Approval, now time.Time, window time.Duration) error {
	if window <= 0 {
		window = DefaultReplayWindow
	}
	if age := now.Sub(prev.Time); age > window {
		return fmt.Errorf("%w: decision %s was made at %s, more than the replay window %s ago",
			ErrReplayExpired, prev.ID, prev.Time.UTC().Format(time.RFC3339), window)
	}
	if lifted == nil {
		return nil
	}
	if err := lifted.Covers(prev, now); err != nil {
		return fmt.Errorf("%w: its MAY_ACT came from approval %s, which no longer gives it: %w", ErrReplayExpired, lifted.ID, err)
	}
	return nil
}
