package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// client is one MCP client over Streamable HTTP, written against the wire
// (not an SDK) so that the load generator costs the same whatever it
// measures: one session (when the server gives one), then tools/call.
type client struct {
	hc      *http.Client
	url     string
	tool    string
	session string
	id      atomic.Int64
}

func newClient(hc *http.Client, url, tool string) (*client, error) {
	c := &client{hc: hc, url: url, tool: tool}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gatewaybench","version":"1"}}}`
	if _, err := c.post([]byte(init), true); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if _, err := c.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return c, nil
}

// call calls the echo tool once and checks the answer echoes.
func (c *client) call(text string) error {
	id := c.id.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, id, c.tool, text)
	raw, err := c.post([]byte(body), true)
	if err != nil {
		return err
	}
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("answer %q: %w", raw, err)
	}
	switch {
	case resp.Error != nil:
		return fmt.Errorf("JSON-RPC error: %s", resp.Error.Message)
	case resp.Result.IsError || len(resp.Result.Content) == 0 || resp.Result.Content[0].Text != text:
		return fmt.Errorf("unexpected answer %s", raw)
	}
	return nil
}

// post sends one message; for a request it returns the JSON-RPC answer,
// read from a JSON body or from the first data line of an SSE stream.
func (c *client) post(body []byte, request bool) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if !request {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(d, `"id"`) {
				return []byte(strings.TrimSpace(d)), nil
			}
		}
		return nil, fmt.Errorf("SSE stream ended without an answer: %v", sc.Err())
	}
	return io.ReadAll(resp.Body)
}
