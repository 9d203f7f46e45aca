package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is a running ewp-mcp --http.
type server struct {
	cmd *exec.Cmd
	pid int
	url string
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// status is a field of /proc/PID/status in kB (VmRSS, VmHWM).
func (s *server) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	log.Fatalf("no %s in /proc/%d/status", field, s.pid)
	return 0
}

var client = &http.Client{
	Timeout:   time.Minute,
	Transport: &http.Transport{MaxIdleConnsPerHost: 256},
}

// burst makes one call to warm the server, then sends rounds bursts of n
// concurrent copies of body, each burst after the last has been
// answered, checks every answer (an inline refusal is a tool result
// naming the code; "413" is the HTTP status), and prints the latencies,
// calls/s and the server's peak resident set.
func (s *server) burst(name string, body []byte, n, rounds int, want string) {
	s.call(body, want)
	before := s.status("VmRSS")
	var lat []time.Duration
	var mu sync.Mutex
	start := time.Now()
	for range rounds {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := s.call(body, want)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	wall := time.Since(start)
	slices.Sort(lat)
	fmt.Printf("%s N=%-3d %4d calls: median %7.1f ms, max %7.1f ms, %6.1f calls/s; server peak RSS %4d MB (%d MB after warm-up)\n",
		name, n, len(lat), ms(lat[len(lat)/2]), ms(lat[len(lat)-1]), float64(len(lat))/wall.Seconds(),
		s.status("VmHWM")>>10, before>>10)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *server) call(body []byte, want string) time.Duration {
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		log.Fatalf("call: %v", err)
	}
	out, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(start)
	switch {
	case err != nil:
		log.Fatalf("read answer: %v", err)
	case want == "413":
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			log.Fatalf("HTTP %d, want 413: %.300s", res.StatusCode, out)
		}
	case res.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(want)):
		log.Fatalf("HTTP %d, answer without %q: %.300s", res.StatusCode, want, out)
	}
	return d
}
