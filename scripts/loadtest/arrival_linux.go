package main

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampedConn reads with recvmsg and the kernel's receive timestamps
// (SO_TIMESTAMPNS), and remembers when the first bytes read after expect
// reached the socket. The difference from the client's own clock is the
// time the client took to get a core and read them: on a machine whose
// cores the client shares with the server, that wait is part of what the
// client sees but not of the server's answer time.
type stampedConn struct {
	*net.TCPConn
	raw     syscall.RawConn
	oob     []byte
	waiting bool
	arrival time.Time
}

func stampConn(c net.Conn) (*stampedConn, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, errors.New("-arrival needs a TCP connection")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	return &stampedConn{TCPConn: tc, raw: raw, oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))}, nil
}

// expect starts watching for the next answer's first bytes.
func (c *stampedConn) expect() { c.waiting, c.arrival = true, time.Time{} }

// arrived is when the answer's first bytes reached the socket, or the zero
// time when the kernel gave no timestamp.
func (c *stampedConn) arrived() time.Time { return c.arrival }

func (c *stampedConn) Read(p []byte) (int, error) {
	var n, oobn int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, c.oob, 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if n > 0 && c.waiting {
		c.waiting = false
		c.arrival = receiveTime(c.oob[:oobn])
	}
	if n == 0 && err == nil && len(p) > 0 {
		return 0, io.EOF // the server closed the connection
	}
	return n, err
}

func receiveTime(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix())
		}
	}
	return time.Time{}
}
