// Package policylayers builds the operator's call_policies and budget
// gate layers from their files, for every entrance that configures a gate
// (ewp-mcp --call-policies/--budgets, ewp-gateway's config, ewp-hook-local).
package policylayers

import (
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/budget"
	"github.com/ewp-go/ewp/callpolicy"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/internal/opfile"
)

// Files names the operator's files; "" leaves its layer out.
type Files struct {
	CallPolicies string // Cedar forbid policies over the call (callpolicy)
	Budgets      string // the budgets file (budget)
}

// Built is what Build made: the layers in the order they belong after the
// guard layers (call_policies, then budget, so a call another layer
// refused with an error is never counted), and what they were made from,
// for the start-up log.
type Built struct {
	Layers       []gate.Layer
	CallPolicies *callpolicy.Set // nil without the file
	Budgets      *budget.Budgets // nil without the file
}

// Build reads and checks the files and makes their layers. The budget
// layer counts in log, which must keep counts (audit.Counters: the SQLite,
// PostgreSQL and memlog logs do); now is its clock (nil: time.Now). Errors
// name the file and what is wrong with it.
func Build(f Files, log audit.Log, now func() time.Time) (*Built, error) {
	b := &Built{}
	if f.CallPolicies != "" {
		src, _, err := opfile.Read(f.CallPolicies, callpolicy.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("call policies: %w", err)
		}
		if b.CallPolicies, err = callpolicy.Load(f.CallPolicies, src); err != nil {
			return nil, fmt.Errorf("%s: the call-policy file is not valid:\n%w", f.CallPolicies, err)
		}
		b.Layers = append(b.Layers, callpolicy.NewLayer(b.CallPolicies))
	}
	if f.Budgets != "" {
		src, _, err := opfile.Read(f.Budgets, budget.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("budgets: %w", err)
		}
		if b.Budgets, err = budget.Parse(src); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Budgets, err)
		}
		counters, err := countersOf(log)
		if err != nil {
			return nil, err
		}
		b.Layers = append(b.Layers, budget.NewLayer(b.Budgets, counters, now))
	}
	return b, nil
}

// countersOf finds the log's counters by type assertion, looking through
// wrappers such as audit/notify's (Unwrap).
func countersOf(log audit.Log) (audit.Counters, error) {
	if log == nil {
		return nil, errors.New("budgets need a decision log to keep their counts in (not --audit off)")
	}
	for l := log; l != nil; {
		if c, ok := l.(audit.Counters); ok {
			return c, nil
		}
		w, ok := l.(interface{ Unwrap() audit.Log })
		if !ok {
			break
		}
		l = w.Unwrap()
	}
	return nil, fmt.Errorf("budgets need a decision log that keeps counts (SQLite or PostgreSQL); this one (%T) does not", log)
}
