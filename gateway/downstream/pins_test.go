package downstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestDefinitionSHA256(t *testing.T) {
	var a, b mcp.Tool
	if err := json.Unmarshal([]byte(`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"p":{"type":"string","maxLength":3},"q":{"type":"number"}}},"_meta":{"x":1}}`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"inputSchema":{"properties":{"q":{"type":"number"},"p":{"maxLength":3,"type":"string"}},"type":"object"},"description":"d","name":"t","icons":[]}`), &b); err != nil {
		t.Fatal(err)
	}
	sa, _ := DefinitionSHA256(a)
	sb, _ := DefinitionSHA256(b)
	if sa != sb || !isSHA256Hex(sa) {
		t.Fatalf("the same definition spelled differently: %s and %s", sa, sb)
	}
	for _, change := range []func(*mcp.Tool){
		func(t *mcp.Tool) { t.Description = "d." },
		func(t *mcp.Tool) { t.Name = "u" },
		func(t *mcp.Tool) { t.InputSchema.Properties["p"].(map[string]any)["maxLength"] = json.Number("4") },
		func(t *mcp.Tool) { t.InputSchema.Required = []string{"p"} },
		func(t *mcp.Tool) { t.Title = "T" },
		func(t *mcp.Tool) { yes := true; t.Annotations.DestructiveHint = &yes },
	} {
		var c mcp.Tool
		_ = json.Unmarshal([]byte(`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"p":{"type":"string","maxLength":3},"q":{"type":"number"}}}}`), &c)
		change(&c)
		if sc, _ := DefinitionSHA256(c); sc == sa {
			t.Errorf("a changed definition has the same sha256: %+v", c)
		}
	}
}

func TestPinsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pins.json")
	p, err := loadPins(path) // none yet
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("ab", 32)
	if err := p.set(map[string]string{"s__t": sum}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	// Another process pins meanwhile; the next set keeps its pin.
	q, _ := loadPins(path)
	if err := q.set(map[string]string{"s__u": sum}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := p.set(map[string]string{"s__v": sum}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	r, err := loadPins(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"s__t", "s__u", "s__v"} {
		if got, ok := r.get(n); !ok || got != sum {
			t.Errorf("%s = %q %v", n, got, ok)
		}
	}
	for _, bad := range []struct{ doc, says string }{
		{`{"version": 2, "tools": {}}`, "/version"},
		{`{"version": 1, "tools": {"s__t": {"sha256": "ABC"}}}`, "/tools/s__t/sha256"},
		{`{"version": 1, "tools": {}, "extra": 1}`, "extra"},
		{`not json`, "invalid"},
	} {
		if err := os.WriteFile(path, []byte(bad.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadPins(path); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: err %v, want one naming %s", bad.doc, err, bad.says)
		}
		if _, err := New(Options{PinsPath: path}); err == nil {
			t.Errorf("%s: New accepted it", bad.doc)
		}
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"tools":{}}`+strings.Repeat(" ", MaxPinsBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadPins(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized pins file: %v", err)
	}
}
