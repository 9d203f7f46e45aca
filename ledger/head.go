package ledger

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Head names the last event of the hash chain: its sequence number and
// hash. A pipeline that keeps the heads its ingests reported can later
// prove, with VerifyHead, that nothing was cut off the end of the chain,
// which no check from inside the file alone can see.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"` // lower-case hex sha256; "" for an empty ledger
}

// String is the form ewp-ingest prints and `verify --head` takes: SEQ:HASH.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ParseHead reads SEQ:HASH.
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 0 {
		return Head{}, fmt.Errorf("chain head %q: want SEQ:HASH, e.g. 42:9f86d08…, as ewp-ingest printed it", s)
	}
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return Head{}, fmt.Errorf("chain head %q: the hash must be 64 hex digits (a sha256)", s)
	}
	return Head{Seq: n, Hash: strings.ToLower(hash)}, nil
}
