package auditchain

import (
	"encoding/hex"
	"strconv"

	"github.com/ewp-go/ewp/audit"
)

// payload appends a canonical JSON object, key by key, as encoding/json
// would marshal a struct of strings and ints with those keys in that
// order: the chain's payloads are built on every Record, and reflection
// was a tenth of the store's CPU per record. TestPayloadsMatchMarshal
// holds the output byte-equal to json.Marshal of the declared structs.
type payload []byte

func (p payload) key(k string) payload {
	if len(p) == 0 {
		p = append(p, '{')
	} else {
		p = append(p, ',')
	}
	p = append(p, '"')
	p = append(p, k...)
	return append(p, '"', ':')
}

func (p payload) str(k, v string) payload { return audit.AppendJSONString(p.key(k), v) }

func (p payload) int(k string, v int64) payload { return strconv.AppendInt(p.key(k), v, 10) }

func (p payload) hex(k string, v []byte) payload {
	p = append(p.key(k), '"')
	p = hex.AppendEncode(p, v)
	return append(p, '"')
}

func (p payload) null(k string) payload { return append(p.key(k), "null"...) }

func (p payload) end() []byte { return append(p, '}') }
