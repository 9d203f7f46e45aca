package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// OpenAI starts a stand-in for an OpenAI-compatible chat-completions
// endpoint (what an OpenClaw custom provider's baseUrl points at): POST
// …/chat/completions answers the script's tool call until the request
// carries a tool message, then the final text; streamed as server-sent
// chunks when the request asks for a stream. GET …/models lists one
// model, "stand-in".
func OpenAI(t testing.TB, sc Script) *Server {
	return start(t, func(s *Server, body []byte, w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"stand-in","object":"model","owned_by":"ewp"}]}`)
			return
		case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
			http.NotFound(w, r)
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
		n := len(s.Requests())
		useTool := len(req.Tools) > 0 && len(toolResults(body)) == 0
		msg := map[string]any{"role": "assistant", "content": sc.Text}
		finish := "stop"
		if useTool {
			finish = "tool_calls"
			var calls []any
			for i, in := range append([]json.RawMessage{sc.Input}, sc.More...) {
				calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_stand_in_%d_%d", n, i), "type": "function",
					"function": map[string]any{"name": sc.Tool, "arguments": string(in)}})
			}
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
		}
		id, created := fmt.Sprintf("chatcmpl-stand-in-%d", n), time.Now().Unix()
		usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any, usage any) {
			c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			if usage != nil {
				c["usage"] = usage
			}
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		chunk(msg, nil, nil)
		chunk(map[string]any{}, finish, usage)
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
}
