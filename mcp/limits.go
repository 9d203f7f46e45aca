package mcp

import (
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// The limits a caller's view is decoded under (WithLimits). The kernel
// applies warrant.Limits while it decodes; this server checks the one
// limit it can see before the kernel runs, the size of the view's text,
// so an oversized view costs nothing to refuse.

// decodeView decodes a view a caller sent, under the server's limits.
func (s *Server) decodeView(raw []byte) (*warrant.View, error) {
	if max := effective(s.limits.MaxViewBytes, warrant.DefaultLimits.MaxViewBytes); max >= 0 && len(raw) > max {
		return nil, refuse(warrant.CodeLimitExceeded, "view", "is %d bytes of JSON; this server takes views of at most %d bytes",
			len(raw), max)
	}
	d := warrant.Decoder{Limits: s.limits}
	return d.DecodeView(raw)
}

// effective is a Limits field as warrant.Limits defines it: zero is the
// default, negative no limit.
func effective(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// limitFlags is what an operator changes to raise a limit; every
// CodeLimitExceeded refusal ends with it, so whoever reads it knows the
// limit is the server's choice, not a rule of the protocol.
const limitFlags = "the operator raises the limits with ewp-mcp --max-view-bytes, --max-records, --max-subjects and --max-string-bytes"

// withLimitHint adds limitFlags to a limit refusal's message once.
func withLimitHint(msg string) string {
	if strings.Contains(msg, "--max-") || strings.Contains(msg, entranceNote) {
		return msg
	}
	return msg + " (" + limitFlags + ")"
}
