package audit

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// NewID returns a time-ordered UUID (version 7) for a decision or an
// approval.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// String is the form `ewp-audit verify` prints and `--head` takes: SEQ:HASH.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ParseHead reads SEQ:HASH as String writes it.
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 0 {
		return Head{}, fmt.Errorf("chain head %q: want SEQ:HASH, e.g. 42:9f86d08…, as `ewp-audit verify` printed it", s)
	}
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return Head{}, fmt.Errorf("chain head %q: the hash must be 64 hex digits (a sha256)", s)
	}
	return Head{Seq: n, Hash: strings.ToLower(hash)}, nil
}
