package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// readResponse reads what the server sends and refuses what it cannot
// read, rather than mis-reading it.
func TestReadResponse(t *testing.T) {
	cases := []struct {
		in      string
		status  int
		body    string
		closing bool
		fails   bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}rest", 200, `{"a":1}`, false, false},
		{"HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", 413, `{}`, true, false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 200, "", true, true},
		{"HTTP/1.1 200 OK\r\n\r\n{}", 200, "", true, true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", 200, "", false, true},
		{"SSH-2.0-OpenSSH\r\n", 0, "", true, true},
	}
	for _, c := range cases {
		var resp bytes.Buffer
		status, closing, err := readResponse(bufio.NewReader(strings.NewReader(c.in)), &resp)
		if (err != nil) != c.fails || status != c.status || (!c.fails && (resp.String() != c.body || closing != c.closing)) {
			t.Errorf("%q: status %d closing %v body %q err %v", c.in, status, closing, resp.String(), err)
		}
	}
}

// The flags default to the load test as it was (warrant_now, ewp-mcp's
// default decision log), and the may_act comparison reads as asked.
func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseArgs([]string{"-dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.tool != toolWarrantNow || !cfg.audit || cfg.compareAudit || cfg.rounds != 3 || cfg.call() != (call{toolWarrantNow, true}) {
		t.Errorf("defaults: tool %q audit %v compare %v rounds %d", cfg.tool, cfg.audit, cfg.compareAudit, cfg.rounds)
	}
	cfg, err = parseArgs([]string{"-dir", dir, "-tool", "may_act", "-audit", "off", "-clients", "64"})
	if err != nil || cfg.call() != (call{toolMayAct, false}) {
		t.Errorf("-tool may_act -audit off: %+v, %v", cfg.call(), err)
	}
	cfg, err = parseArgs([]string{"-dir", dir, "-tool", "may_act", "-compare-audit", "-rounds", "5", "-clients", "8,64", "-inprocess"})
	if err != nil || !cfg.compareAudit || cfg.rounds != 5 || len(cfg.loads) != 2 || !cfg.inprocess {
		t.Errorf("-compare-audit -rounds 5: %+v, %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"-dir", dir, "-compare-server", "/tmp/old", "-interleave", "500ms", "-clients", "64"})
	if err != nil || cfg.compareServer != "/tmp/old" || cfg.call() != (call{toolWarrantNow, true}) {
		t.Errorf("-compare-server -interleave: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{
		{"-tool", "warrant"},
		{"-tool", "check_grounding"},
		{"-audit", "yes"},
		{"-audit", ""},
		{"-rounds", "0", "-tool", "may_act", "-compare-audit"},
		{"-compare-audit"}, // warrant_now is never recorded
		{"-compare-audit", "-tool", "may_act", "-url", "http://127.0.0.1:1/mcp"},
		{"-compare-audit", "-tool", "may_act", "-serve"},
		{"-baseline", "-tool", "may_act"},
		{"-interleave", "500ms", "-tool", "may_act"}, // switches between the comparison's servers
		{"-interleave", "500ms", "-tool", "may_act", "-compare-audit", "-inprocess"},
		{"-interleave", "500ms", "-tool", "may_act", "-compare-audit", "-duration", "800ms"},
		{"-interleave", "500ms", "-tool", "may_act", "-compare-audit", "-clients", "64@1000"},
		{"-interleave", "-1s", "-tool", "may_act", "-compare-audit"},
		{"-tool", "may_act", "64"},
		{"-compare-server", "/tmp/old"}, // runs interleaved only
		{"-compare-server", "/tmp/old", "-interleave", "500ms", "-tool", "may_act", "-compare-audit"},
		{"-compare-server", "/tmp/old", "-interleave", "500ms", "-url", "http://127.0.0.1:1/mcp"},
	} {
		if _, err := parseArgs(append([]string{"-dir", dir}, bad...)); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

// The server never gets the ingest token that would open the ledger for
// writing; everything else passes.
func TestServerEnviron(t *testing.T) {
	got := serverEnviron([]string{"PATH=/bin", "EWP_INGEST_TOKEN=secret", "GOGC=400", "EWP_INGEST_TOKEN_FILE=x"})
	if fmt.Sprint(got) != "[PATH=/bin GOGC=400 EWP_INGEST_TOKEN_FILE=x]" {
		t.Errorf("serverEnviron = %v", got)
	}
}
