package ledgerstore

import (
	"errors"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// A stored view over the limits stays a refusal naming the limit; any
// other kernel refusal of a stored body is internal; a refusal of the
// caller's input (not wrapped by the ledger) passes unchanged.
func TestStoredRefusals(t *testing.T) {
	limit := &warrant.Error{Code: warrant.CodeLimitExceeded, Field: "evidence", Rule: "more than 3 records"}
	var we *warrant.Error
	if err := stored(&ledger.Error{Op: "decode stored snapshot", Err: limit}); !errors.As(err, &we) ||
		we.Code != warrant.CodeLimitExceeded || we.Field != "evidence" {
		t.Errorf("stored view over the limits: %v", err)
	}
	bad := &warrant.Error{Code: warrant.CodeInvalidView, Field: "polarity", Rule: "unknown"}
	if err := stored(&ledger.Error{Op: "decode stored snapshot", Err: bad}); errors.As(err, &we) {
		t.Errorf("damaged stored view reaches the caller as a refusal: %v", err)
	}
	if err := stored(bad); err != bad {
		t.Errorf("a refusal of the input was changed: %v", err)
	}
}
