package pgtest

import "testing"

// Run is Main for a TestMain that has more to do after the tests (remove
// a built binary, say): it runs them, stops the cluster, and returns the
// exit code instead of exiting.
func Run(m *testing.M) int {
	mainCalled = true
	code := m.Run()
	if cluster != nil {
		cluster.dropTemplates()
		cluster.teardown()
	}
	return code
}
