package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Anthropic starts a stand-in for the Anthropic Messages API (what
// Claude Code's ANTHROPIC_BASE_URL points at): POST /v1/messages answers
// the script's tool_use until the request carries a tool_result, then
// the final text; streamed as server-sent events when the request asks
// for a stream, as one JSON message otherwise. A request that offers no
// tools (a client's side call, such as a title) gets the text.
// count_tokens answers a fixed count.
func Anthropic(t testing.TB, sc Script) *Server {
	return start(t, func(s *Server, body []byte, w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/messages") {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens":10}`)
			return
		}
		var req struct {
			Model  string            `json:"model"`
			Stream bool              `json:"stream"`
			Tools  []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		useTool := len(req.Tools) > 0 && len(toolResults(body)) == 0
		msg := anthropicMessage(req.Model, sc, useTool, len(s.Requests()))
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(msg)
			return
		}
		streamAnthropic(w, msg)
	})
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anthropicMsg struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        map[string]int   `json:"usage"`
}

func anthropicMessage(model string, sc Script, useTool bool, n int) anthropicMsg {
	m := anthropicMsg{ID: fmt.Sprintf("msg_stand_in_%d", n), Type: "message", Role: "assistant", Model: model,
		Usage: map[string]int{"input_tokens": 10, "output_tokens": 5}}
	stop := "end_turn"
	if useTool {
		stop = "tool_use"
		m.Content = []anthropicBlock{{Type: "tool_use", ID: fmt.Sprintf("toolu_stand_in_%d", n), Name: sc.Tool, Input: sc.Input}}
	} else {
		txt := sc.Text
		m.Content = []anthropicBlock{{Type: "text", Text: &txt}}
	}
	m.StopReason = &stop
	return m
}

// streamAnthropic sends msg as the Messages API's event stream: the
// message without content, each block started, filled by one delta and
// stopped, then the stop reason and the end.
func streamAnthropic(w http.ResponseWriter, msg anthropicMsg) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	ev := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	stop := msg.StopReason
	head := msg
	head.Content, head.StopReason = []anthropicBlock{}, nil
	ev("message_start", map[string]any{"type": "message_start", "message": head})
	for i, b := range msg.Content {
		start, delta := b, map[string]any{}
		switch b.Type {
		case "text":
			empty := ""
			start.Text = &empty
			delta = map[string]any{"type": "text_delta", "text": *b.Text}
		case "tool_use":
			start.Input = json.RawMessage(`{}`)
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}
		}
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}
