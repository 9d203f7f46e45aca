package sqlite

import "context"

// SelectSQL exposes the listing query for plan checks.
func (l *Log) SelectSQL(q Query) (string, []any, error) {
	return l.selectSQL(context.Background(), q)
}

// WithUpgradeFault returns o with a hook that fails an upgrade at a stage
// ("copied", "dropped", "commit") by returning an error.
func WithUpgradeFault(o Options, fault func(stage string) error) Options {
	o.upgradeFault = fault
	return o
}
