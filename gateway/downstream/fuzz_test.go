package downstream

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzLineGuard holds the guard to the plain reading: split on newlines,
// drop blank lines, pass JSON lines whole, count the rest; a line over
// the limit or one garbage line too many ends the stream with a protocol
// error after exactly the lines before it.
func FuzzLineGuard(f *testing.F) {
	f.Add([]byte("{}\n[1]\n"), 8)
	f.Add([]byte("x\n{}\n\n  \n"), 4)
	f.Add([]byte(`{"a":"bbbbbbbbbbbbbbbbbbbb"}`+"\n"), 10)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		var want bytes.Buffer
		garbage, broken := 0, false
		lines := bytes.SplitAfter(in, []byte("\n"))
		for i, line := range lines {
			last := i == len(lines)-1 && !bytes.HasSuffix(line, []byte("\n"))
			if len(bytes.TrimSuffix(line, []byte("\n"))) > max {
				broken = true
				break
			}
			if last { // a line cut off by EOF is never handed on
				break
			}
			body := bytes.TrimSpace(line)
			switch {
			case len(body) == 0:
			case json.Valid(body):
				want.Write(line)
			default:
				if garbage++; garbage > maxGarbageLines {
					broken = true
				}
			}
			if broken {
				break
			}
		}
		got, err := io.ReadAll(newLineGuard(bytes.NewReader(in), max, nil))
		if broken != isProtocol(err) {
			t.Fatalf("protocol error %v, want %v", err, broken)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("got %q, want %q", got, want.Bytes())
		}
	})
}
