// Package modeltest holds scripted stand-ins for a model endpoint, for
// tests that drive a real agent client (Claude Code, OpenClaw) with no
// network and no model: each replays one fixed tool call, and once the
// client sends that call's result back, a final text. The choice is made
// from the request alone (does it carry a tool result yet?), so the
// client's own side calls, retries or a second turn get the same answer
// again. They listen on loopback only.
package modeltest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Script is what a stand-in replays: one tool call, then Text.
type Script struct {
	// Tool is the tool's name as the client knows it ("Write", "write").
	Tool string
	// Input is the tool's arguments, a JSON object.
	Input json.RawMessage
	// More are the arguments of further calls of the same tool made in the
	// same answer (parallel tool calls; the OpenAI stand-in only), so one
	// turn can try several calls.
	More []json.RawMessage
	// Text is the final answer once the tool's result came back.
	Text string
}

// maxBody bounds what a stand-in reads of one request (clients send the
// whole conversation and their tool definitions, a few hundred KiB).
const maxBody = 8 << 20

// Server is a running stand-in.
type Server struct {
	URL    string
	mu     sync.Mutex
	bodies [][]byte
}

// Requests are the bodies the stand-in received, in order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// ToolResults are the texts of every tool result the client sent back:
// what the tool printed, or why it did not run (a hook's reason).
func (s *Server) ToolResults() []string {
	var out []string
	for _, b := range s.Requests() {
		out = append(out, toolResults(b)...)
	}
	return out
}

func start(t testing.TB, h func(s *Server, body []byte, w http.ResponseWriter, r *http.Request)) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		h(s, body, w, r)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// toolResults finds the tool results of either protocol in a request
// body: Anthropic's tool_result blocks and OpenAI's role "tool" messages.
func toolResults(body []byte) []string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, text(m.Content))
			continue
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, text(b.Content))
			}
		}
	}
	return out
}

// text is a content value as text: a string, or its parts' texts joined.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	for _, p := range parts {
		s += p.Text
	}
	return s
}
