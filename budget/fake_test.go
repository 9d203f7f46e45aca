package budget

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// memCounters is audit.Counters in memory, for the unit tests (the
// stores' own are tested in store_test.go).
type memCounters struct {
	mu  sync.Mutex
	n   map[string]int64
	err error
}

func newMem() *memCounters { return &memCounters{n: map[string]int64{}} }

func (m *memCounters) Add(_ context.Context, key string, window time.Time, n int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return 0, m.err
	}
	k := fmt.Sprintf("%s@%s", key, window.Format(time.RFC3339))
	m.n[k] += n
	return m.n[k], nil
}

func (m *memCounters) get(key string, window time.Time) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[fmt.Sprintf("%s@%s", key, window.Format(time.RFC3339))]
}
