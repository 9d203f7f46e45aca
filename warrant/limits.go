package warrant

// Limits bound what one view may cost to decode and evaluate, so that no
// single request or stored snapshot can take unbounded memory or time. A
// view over any limit is refused with CodeLimitExceeded, naming the field
// and the limit, before it is evaluated. The zero value of a field means
// its default (DefaultLimits); a negative value means no limit.
//
// The defaults are far above anything the reference pack and the public
// differential corpus contain, so conformance is unaffected.
type Limits struct {
	// MaxViewBytes bounds the JSON text of one view (adapter_meta included).
	MaxViewBytes int
	// MaxRecords bounds assertions + evidence + checks + conflicts +
	// lineage edges together.
	MaxRecords int
	// MaxSubjects bounds each subjects list (the view's and each check's)
	// and each conflict's proposition_ids and omitted_sources.
	MaxSubjects int
	// MaxStringBytes bounds any one string value (ids, texts, times).
	MaxStringBytes int
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	MaxViewBytes:   4 << 20,
	MaxRecords:     20_000,
	MaxSubjects:    10_000,
	MaxStringBytes: 64 << 10,
}
