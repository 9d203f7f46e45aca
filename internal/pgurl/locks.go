package pgurl

// The advisory lock keys (pg_advisory_xact_lock, released when the
// transaction ends) the stores take in a database. Advisory locks are per
// database: stores in two databases of one server never wait for each
// other. Each key is written here once, so two stores can neither share a
// key by accident nor drift apart where they must share one.
const (
	// LockLedgerChain is taken first by every write transaction of the
	// ledger: its chain has one head, so writers in any number of
	// processes take turns on it.
	LockLedgerChain int64 = 0x6577_7000_0000_0001
	// LockInit is taken by the ledger's and the decision log's Init: both
	// create the same roles, so the two take turns.
	LockInit int64 = 0x6577_7000_0000_0002
	// LockLogChain is taken first by every write transaction of the
	// decision log: its own chain, a different key from the ledger's, so
	// the log never waits for an ingest.
	LockLogChain int64 = 0x6577_7000_0000_0011
)
