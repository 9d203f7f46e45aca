package main

import (
	"net"
	"testing"
	"time"
)

// The arrival time is when the bytes reached the socket, not when they
// were read: a reader that comes late still learns when they came.
func TestArrivalIsWhenBytesCame(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	sc, err := stampConn(c)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel turns receive timestamps on for everyone a moment after
	// the first socket asks (a deferred switch); until then segments come
	// without one. Wait for that, as a long load-test run never notices.
	buf := make([]byte, 64)
	for i := 0; ; i++ {
		sc.expect()
		if _, err := peer.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if !sc.arrived().IsZero() {
			break
		}
		if i == 100 {
			t.Fatal("no receive timestamp after 100 reads")
		}
		time.Sleep(10 * time.Millisecond)
	}
	const late = 200 * time.Millisecond
	for range 3 {
		sc.expect()
		sent := time.Now()
		if _, err := peer.Write([]byte("answer")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(late)
		if n, err := sc.Read(buf); err != nil || string(buf[:n]) != "answer" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		at := sc.arrived()
		if at.IsZero() {
			t.Fatal("no receive timestamp")
		}
		// Generous bounds: the clocks agree to well under a millisecond.
		if d := at.Sub(sent); d < -time.Millisecond || d > late/2 {
			t.Errorf("arrived %v after sending; want about 0, well before the read %v later", d, late)
		}
	}
	// A closed connection reads as the end, as a net.Conn's does.
	peer.Close()
	if n, err := sc.Read(make([]byte, 8)); n != 0 || err == nil {
		t.Errorf("after close: %d, %v", n, err)
	}
}
