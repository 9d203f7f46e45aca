package ingest

import (
	"os"
	"runtime/debug"
)

// GoMemoryLimit is the soft limit LimitMemory sets on the Go runtime's
// memory. With the ledger writer's 32 MiB page cache (about 100 MB
// resident, outside the Go runtime) it keeps a whole ingest near 300 MB
// of resident memory, whatever the input's size; the input itself is
// read through a fixed window and views are not kept.
const GoMemoryLimit = 192 << 20

// LimitMemory sets GoMemoryLimit as the Go runtime's soft memory limit,
// unless the operator chose one with GOMEMLIMIT. Without it the garbage
// collector lets the heap reach twice what is live, and a large
// transaction's remembered records are live for a while.
func LimitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(GoMemoryLimit)
	}
}
