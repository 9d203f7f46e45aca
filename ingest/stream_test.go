package ingest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/store"
)

// bigViews generates n views of about size bytes each, one at a time, so
// the input is never in memory: as JSON Lines, or inside an envelope
// {"views": [...]} when envelope is set.
type bigViews struct {
	n, size, i int
	envelope   bool
	pending    []byte
}

func (g *bigViews) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		switch {
		case g.i > g.n || (g.i == g.n && !g.envelope):
			return 0, io.EOF
		case g.i == g.n:
			g.pending = []byte("]}\n")
		case g.envelope && g.i == 0:
			g.pending = []byte(`{"note": "generated", "views": [` + bigView(g.i, g.size))
		case g.envelope:
			g.pending = []byte(",\n" + bigView(g.i, g.size))
		default:
			g.pending = []byte(bigView(g.i, g.size) + "\n")
		}
		g.i++
	}
	k := copy(p, g.pending)
	g.pending = g.pending[k:]
	return k, nil
}

// bigView has four evidence items that share its size.
func bigView(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"proposition_id": "P-big-%d", "view_id": "v1", "evidence": [`, i)
	for k := range 4 {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"evidence_id": "e%d", "polarity": "supports", "content": "%s", "observed_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s%d", "lineage_id": "L1", "origin_type": "extract", "origin_locator": "x", "snapshot_id": "s1", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}}`,
			k, strings.Repeat(strconv.Itoa(i%10), size/4), k)
	}
	b.WriteString(`]}`)
	return b.String()
}

// peakMemory samples the Go heap in use and the process's resident set
// while fn runs.
func peakMemory(fn func()) (heap, rss uint64) {
	var peakHeap, peakRSS atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			if r := residentBytes(); r > peakRSS.Load() {
				peakRSS.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peakHeap.Load(), peakRSS.Load()
}

// residentBytes is VmRSS from /proc (0 where there is none).
func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// A 200 MB input, as one transaction, loads in memory that does not grow
// with it: the input is read as it is split (an envelope's views list
// element by element), views are written as they are decoded, and
// nothing per view is kept.
func TestLoadMemoryIndependentOfInputSize(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping 200 MB loads")
	}
	eachStore(t, testLoadMemoryIndependentOfInputSize)
}

func testLoadMemoryIndependentOfInputSize(t *testing.T, k storeKind) {
	for _, envelope := range []bool{false, true} {
		const n, size = 1000, 200 << 10
		f := newFactory(t, k)
		l, done := f.fresh(t)
		var err error
		runtime.GC()
		base := residentBytes()
		var rep FileReport
		heap, rss := peakMemory(func() {
			rep, err = (&Loader{L: l}).Load(context.Background(), Input{Name: "big", R: &bigViews{n: n, size: size, envelope: envelope}})
		})
		done()
		if err != nil || rep.Stored != n || len(rep.Refused) != 0 {
			t.Fatalf("envelope=%v: stored %d of %d: %v %v", envelope, rep.Stored, n, err, rep.Refused)
		}
		t.Logf("200 MB input (%s): peak Go heap %d MB, peak RSS %d MB (%d MB before)", rep.Format, heap>>20, rss>>20, base>>20)
		if heap > 200<<20 {
			t.Errorf("%s: peak Go heap %d MB for a 200 MB input; want it independent of the input (< 200 MB)", rep.Format, heap>>20)
		}
		if base > 0 && rss > base+512<<20 {
			t.Errorf("%s: resident set grew by %d MB", rep.Format, (rss-base)>>20)
		}
	}
}

// A stream from a pipe that stays open: the first view is committed, and
// visible to a reader, while the writer has not closed the pipe.
func TestStreamCommitsBeforeTheInputEnds(t *testing.T) {
	eachStore(t, testStreamCommitsBeforeTheInputEnds)
}

func testStreamCommitsBeforeTheInputEnds(t *testing.T, k storeKind) {
	l, dsn := freshLedger(t, k)
	pr, pw := io.Pipe()
	done := make(chan FileReport, 1)
	go func() {
		rep, err := (&Loader{L: l}).Load(context.Background(), Input{Name: "<stdin>", R: pr, Stream: true})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	go io.WriteString(pw, line("P-1", "v1", "a")) //nolint:errcheck // the test fails below if it did not arrive
	reader, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	start := time.Now()
	for {
		if _, err := reader.Latest(context.Background(), "P-1"); err == nil {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("the first view is not visible 2 s after it was written, with the pipe still open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	if rep := <-done; rep.Stored != 1 || !rep.Written {
		t.Fatalf("%+v", rep)
	}
}
