package callpolicy

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
)

// Any arguments give a verdict, never a panic or an error, and arguments
// Cedar could not be given fire every policy (DENY here).
func FuzzDecide(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"path":"/etc/x"}`, `{"rows":1e400}`, `{"a":[1,[2,{"b":null}]]}`, `[`, `"x"`, `{"n":1.00001}`} {
		f.Add(s)
	}
	set, err := Load("f.cedar", []byte(policies))
	if err != nil {
		f.Fatal(err)
	}
	l := NewLayer(set)
	f.Fuzz(func(t *testing.T, args string) {
		in := gate.Input{Agent: audit.Principal{Name: "bob", Groups: []string{"ops"}},
			Call: &gate.ToolCall{Name: "db/drop", Arguments: json.RawMessage(args)}}
		d, err := l.Decide(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if _, bad := inputRecord(json.RawMessage(args)); bad != nil && (d.Decision != audit.VerdictDeny || len(d.Detail.(Detail).Fired) != set.Len()) {
			t.Fatalf("%q: %v, yet %s with %d fired", args, bad, d.Decision, len(d.Detail.(Detail).Fired))
		}
	})
}
