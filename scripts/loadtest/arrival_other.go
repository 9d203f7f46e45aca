//go:build !linux

package main

import (
	"errors"
	"net"
	"time"
)

type stampedConn struct{ net.Conn }

func stampConn(net.Conn) (*stampedConn, error) {
	return nil, errors.New("-arrival needs Linux's socket receive timestamps")
}

func (*stampedConn) expect()            {}
func (*stampedConn) arrived() time.Time { return time.Time{} }
