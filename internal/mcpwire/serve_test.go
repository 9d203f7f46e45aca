package mcpwire

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A request in flight when the context ends is still answered, and Serve
// then returns nil.
func TestServeAnswersInFlightThenStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(w, "answered")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	calledStopping := false
	go func() { stopped <- Serve(ctx, hs, ln, 5*time.Second, func() { calledStopping = true }) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-started
	cancel()
	if body := <-got; body != "answered" {
		t.Errorf("the request in flight got %q", body)
	}
	if err := <-stopped; err != nil || !calledStopping {
		t.Errorf("Serve returned %v (stopping called: %v)", err, calledStopping)
	}
}
