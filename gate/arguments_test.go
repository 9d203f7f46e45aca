package gate

import (
	"encoding/json"
	"strings"
	"testing"
)

func decodeNumbers(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRedactorAtAnyDepth(t *testing.T) {
	args := decodeNumbers(t, `{"path": "a<b", "Access_Token": "s1", "headers": {"Authorization": "Bearer s2", "x": 1.50},
		"list": [{"db_password": "s3"}, {"keep": "ok"}], "session": {"id": "s4"}}`)
	text, cut := newRedactor(nil).recorded(args)
	if cut {
		t.Fatal("cut")
	}
	for _, secret := range []string{"s1", "s2", "s3", "s4"} {
		if strings.Contains(string(text), secret) {
			t.Errorf("%s recorded: %s", secret, text)
		}
	}
	want := `{"Access_Token":"[redacted]","headers":{"Authorization":"[redacted]","x":1.50},"list":[{"db_password":"[redacted]"},{"keep":"ok"}],"path":"a\u003cb","session":"[redacted]"}`
	if string(text) != want {
		t.Errorf("recorded\n%s\nwant\n%s", text, want)
	}
	if args["Access_Token"] != "s1" {
		t.Error("redaction changed the arguments themselves (which are hashed)")
	}
	// The operator's list replaces the default; an empty one redacts nothing.
	if text, _ := newRedactor([]string{"Path"}).recorded(args); !strings.Contains(string(text), `"path":"[redacted]"`) || !strings.Contains(string(text), "s1") {
		t.Errorf("--redact-arguments path: %s", text)
	}
	if text, _ := newRedactor([]string{}).recorded(args); !strings.Contains(string(text), "s4") {
		t.Errorf("an empty list redacted: %s", text)
	}
}

func TestRecordedArgumentsBounded(t *testing.T) {
	args := map[string]any{"script": strings.Repeat("é", MaxRecordedArgumentsBytes)}
	text, cut := newRedactor(nil).recorded(args)
	var start string
	if !cut || json.Unmarshal(text, &start) != nil {
		t.Fatalf("not recorded as a cut string: %v %.80s", cut, text)
	}
	if len(start) > MaxRecordedArgumentsBytes || len(start) < MaxRecordedArgumentsBytes-4 || !strings.HasPrefix(start, `{"script":"éé`) {
		t.Errorf("start of %d bytes: %.40q", len(start), start)
	}
}
