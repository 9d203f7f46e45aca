package ledgerstore_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/maxview"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/warrant"
)

// Bounds for TestMaximalStoredView, generous for two shared cores: one
// evaluation of the maximal view takes tens of milliseconds on a quiet
// machine (pairwise subject matching took 6–7 s), and eight at once hold
// a few tens of MB of heap.
const (
	maxViewCallBound = 2 * time.Second
	maxViewHeapBound = 256 << 20
)

// The largest view the default limits admit, stored in a ledger and served
// over HTTP, is evaluated by warrant_now in bounded time and memory, one
// call and eight at once: subject matching at 10,000 × 10,000 is
// near-linear, and concurrent calls do not multiply into gigabytes.
func TestMaximalStoredView(t *testing.T) { ledgerstore.EachStore(t, testMaximalStoredView) }

func testMaximalStoredView(t *testing.T, kind string) {
	url := serveMaxView(t, kind)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now",` +
		`"arguments":{"proposition_id":"` + maxview.PropositionID + `","evaluated_at":"2026-09-21T00:00:00Z"}}}`
	if d := callMaxView(t, url, body); d > maxViewCallBound {
		t.Fatalf("one warrant_now on the maximal view took %v (bound %v): evaluation is not near-linear", d, maxViewCallBound)
	}
	runtime.GC()
	peak, stop := sampleHeap()
	var wg sync.WaitGroup
	durations := make([]time.Duration, 8)
	for i := range durations {
		wg.Add(1)
		go func() {
			defer wg.Done()
			durations[i] = callMaxView(t, url, body)
		}()
	}
	wg.Wait()
	stop()
	for i, d := range durations {
		// Eight calls share two cores, so each may wait for the others.
		if d > 8*maxViewCallBound {
			t.Errorf("concurrent call %d took %v", i, d)
		}
	}
	if p := peak.Load(); p > maxViewHeapBound {
		t.Errorf("eight concurrent calls reached %d MB of heap (bound %d MB)", p>>20, maxViewHeapBound>>20)
	} else {
		t.Logf("eight concurrent calls: %v; peak heap in use %d MB", durations, p>>20)
	}
}

// serveMaxView stores the maximal view in a new ledger and serves it over
// HTTP; it returns the endpoint's URL.
func serveMaxView(t *testing.T, kind string) string {
	t.Helper()
	data, sh := maxview.Build(warrant.Limits{}, "v-max", maxview.StoredSize)
	if sh.Records != warrant.DefaultLimits.MaxRecords || maxview.StoredSize(data) != warrant.DefaultLimits.MaxViewBytes {
		t.Fatalf("the view is not at the limits: %+v", sh)
	}
	v, err := warrant.DecodeView(data)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := ledgerstore.FreshLedger(t, kind)
	if _, err := l.Put(context.Background(), []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	h, err := mcp.New(ledgerstore.New(l)).HTTPHandler(mcp.HTTPConfig{Addr: ts.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL + mcp.EndpointPath
}

// callMaxView posts one call, checks it was evaluated, and returns how
// long it took.
func callMaxView(t *testing.T, url, body string) time.Duration {
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	d := time.Since(start)
	if err != nil || res.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`acceptance`)) ||
		bytes.Contains(out, []byte(`"isError":true`)) {
		t.Errorf("warrant_now on the maximal view: HTTP %d, %v: %.300s", res.StatusCode, err, out)
	}
	return d
}

// sampleHeap records the most heap in use, every few milliseconds, until
// stop is called.
func sampleHeap() (peak *atomic.Uint64, stop func()) {
	peak = new(atomic.Uint64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return peak, func() { close(done); wg.Wait() }
}
