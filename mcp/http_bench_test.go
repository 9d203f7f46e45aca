package mcp

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// decodedStore serves views it decoded once, so a benchmark measures the
// server's request path and not a store's decoding. Views are shared
// between calls: the read tools never modify a stored view.
type decodedStore struct {
	*fakeStore
	latest map[string]*warrant.View
}

func (d decodedStore) Latest(_ context.Context, pid string) (*warrant.View, error) {
	if v, ok := d.latest[pid]; ok {
		return v, nil
	}
	return nil, ErrNotFound
}

// BenchmarkHTTPWarrantNow is one warrant_now call through the HTTP handler
// as ewp-mcp --http serves it (Host check, pre-filter, the direct path's
// dispatch, the tool, the JSON response encoded once), without the network
// and without a ledger. scripts/loadtest
// measures the same call end to end against a real ledger.
func BenchmarkHTTPWarrantNow(b *testing.B) {
	fake := seeded(b)
	st := decodedStore{fakeStore: fake, latest: map[string]*warrant.View{}}
	for pid := range fake.snaps {
		v, err := fake.Latest(context.Background(), pid)
		if err != nil {
			b.Fatal(err)
		}
		st.latest[pid] = v
	}
	srv := New(st, WithLogger(quietLogger()))
	const addr = "127.0.0.1:8765"
	h, err := srv.HTTPHandler(HTTPConfig{Addr: addr})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now",` +
		`"arguments":{"proposition_id":"P-verified","evaluated_at":"` + testT + `"}}}`)
	do := func() {
		req := httptest.NewRequest(http.MethodPost, "http://"+addr+EndpointPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"acceptance":"ACCEPTED"`)) {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			do()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				do()
			}
		})
	})
}
