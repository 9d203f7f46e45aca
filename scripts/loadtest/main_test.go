package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// appendCall must send exactly the warrant_now call the load test
// describes, for any id and proposition number.
func TestAppendCall(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 42}, {123456, 99_999}, {7, 1_234_567}} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"warrant_now",`+
			`"arguments":{"proposition_id":"P-%07d","evaluated_at":%q}}}`, c[0], c[1], evaluatedAt)
		got := appendCall(nil, c[0], c[1])
		if string(got) != want || !json.Valid(got) {
			t.Errorf("appendCall(%d, %d) = %s, want %s", c[0], c[1], got, want)
		}
	}
}
