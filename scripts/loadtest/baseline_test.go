package main

import (
	"encoding/json"
	"testing"
)

// The baseline must answer each call as ewp-mcp would answer the sample
// proposition, with the caller's id and proposition: the load test checks
// its answers like any server's.
func TestBaselineAnswer(t *testing.T) {
	db, err := cachedLedger(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := newBaselineAnswer(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]int{{0, 0}, {17, 2}, {123456, 1}} {
		id, prop, err := callFields(appendCall(nil, c[0], c[1]))
		if err != nil {
			t.Fatal(err)
		}
		out := ans.append(nil, id, prop)
		if err := checkResponse(200, out, c[1], true); err != nil {
			t.Errorf("call %v: %v", c, err)
		}
		var m struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal(out, &m); err != nil || m.ID != c[0] {
			t.Errorf("call %v: id %d, err %v in %s", c, m.ID, err, out)
		}
	}
	for _, bad := range []string{`{}`, `{"id":1}`, `{"id":x,"proposition_id":"P-1"}`, `{"id":1,"proposition_id":""}`} {
		if _, _, err := callFields([]byte(bad)); err == nil {
			t.Errorf("callFields(%s) found fields", bad)
		}
	}
}
