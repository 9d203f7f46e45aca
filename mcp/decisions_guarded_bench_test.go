package mcp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"

	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
)

// BenchmarkMayActDecisionLogGuarded is BenchmarkMayActDecisionLog for a
// call every layer judges (warrant absent, grounding and the demo edge
// policies, answered REQUIRE_CONFIRMATION), without a log and with the
// SQLite store: the decision recorded is larger, and so is the work it
// is recorded beside.
func BenchmarkMayActDecisionLogGuarded(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"may_act","arguments":` +
		`{"action":{"action_id":"a","kind":"delete","risk":"high","reversible":false,"concepts":["delete","file"],"tool_name":"rm","arguments":{"path":"protected/report.txt"},"cardinality":"single"}}}}`)
	for _, name := range []string{"without", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			var opts []Option
			if name == "sqlite" {
				l, err := auditsqlite.Create(filepath.Join(b.TempDir(), "bench.audit"), auditsqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				defer reportCommits(b, l)
				opts = append(opts, WithDecisionLog(DecisionLog{Log: l}))
			}
			srv := demoServer(b, append(opts, WithLogger(quietLogger()))...)
			const addr = "127.0.0.1:8765"
			h, err := srv.HTTPHandler(HTTPConfig{Addr: addr})
			if err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "http://"+addr+EndpointPath, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"decision":"REQUIRE_CONFIRMATION"`)) {
						b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
					}
				}
			})
		})
	}
}
