package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/conformance"
)

// The deliberately broken implementations the tests judge. They live in
// the test binary: TestMain runs one instead of the tests when
// EWP_FAKE_TARGET names it, so "--target eval:'<test binary>'" drives it
// like any other implementation. Each is this kernel with one defect.

const fakeEnv = "EWP_FAKE_TARGET"

// fakeOn is the view_id of the one document some fakes misbehave on.
const fakeOnEnv = "EWP_FAKE_ON_VIEW"

func runFake(name string) int {
	switch name {
	case "flip", "hang", "garbage", "exit", "double":
		return fakeEval(name, os.Getenv(fakeOnEnv))
	case "dropping-store":
		return fakeStore()
	}
	fmt.Fprintln(os.Stderr, "unknown fake", name)
	return 2
}

// fakeEval speaks the eval protocol with the kernel's answers, except:
//
//	flip     every ACCEPTED answer says TENTATIVE
//	hang     never answers the document whose view_id is $EWP_FAKE_ON_VIEW
//	garbage  prints a line that is not JSON for it
//	exit     exits when it reads it
//	double   answers it twice
func fakeEval(mode, on string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		wv, ref := conformance.EvalDocument(in.Bytes())
		var line []byte
		if ref != nil {
			line, _ = json.Marshal(ref)
		} else {
			line, _ = json.Marshal(wv)
		}
		hit := ref == nil && wv.ViewID == on
		switch {
		case mode == "flip" && ref == nil && wv.Warrant.Acceptance == "ACCEPTED":
			line = []byte(strings.Replace(string(line), `"acceptance":"ACCEPTED"`, `"acceptance":"TENTATIVE"`, 1))
		case mode == "hang" && hit:
			time.Sleep(time.Hour)
		case mode == "garbage" && hit:
			line = []byte("Traceback (most recent call last): \x1b[31mboom")
		case mode == "exit" && hit:
			fmt.Fprintln(os.Stderr, "fatal: cannot evaluate")
			return 3
		case mode == "double" && hit:
			line = append(append(line, '\n'), line...)
		}
		out.Write(append(line, '\n'))
		out.Flush()
	}
	return 0
}

// fakeStore is an EWP MCP server whose store loses a field: it keeps
// every view whole and evaluates it whole, but evidence_view_get returns
// it without the content of its evidence records.
func fakeStore() int {
	stored := map[string]json.RawMessage{}
	s := server.NewMCPServer("dropping-store", "0", server.WithToolCapabilities(false))
	raw := func(req mcp.CallToolRequest) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(req.Params.RawArguments, &m)
		if m == nil {
			b, _ := json.Marshal(req.Params.Arguments)
			_ = json.Unmarshal(b, &m)
		}
		return m
	}
	answer := func(v any, ref *conformance.Refusal) (*mcp.CallToolResult, error) {
		if ref != nil {
			b, _ := json.Marshal(map[string]string{"error": ref.Code, "message": ref.Error})
			return mcp.NewToolResultError(string(b)), nil
		}
		b, _ := json.Marshal(v)
		return mcp.NewToolResultText(string(b)), nil
	}
	s.AddTool(mcp.NewTool("warrant_now"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := raw(req)
		view := a["view"]
		if view == nil {
			view = stored[unquote(a["proposition_id"])+"/"+unquote(a["view_id"])]
		}
		doc := withMember(view, "evaluated_at", a["evaluated_at"])
		wv, ref := conformance.EvalDocument(doc)
		return answer(wv, ref)
	})
	s.AddTool(mcp.NewTool("evidence_view_put"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		view := raw(req)["view"]
		wv, ref := conformance.EvalDocument(withMember(view, "evaluated_at", json.RawMessage(`"2026-01-01T00:00:00Z"`)))
		if ref != nil {
			return answer(nil, ref)
		}
		stored[wv.PropositionID+"/"+wv.ViewID] = view
		return answer(map[string]any{"proposition_id": wv.PropositionID, "view_id": wv.ViewID, "stored": true}, nil)
	})
	s.AddTool(mcp.NewTool("evidence_view_get"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := raw(req)
		var view map[string]any
		_ = json.Unmarshal(stored[unquote(a["proposition_id"])+"/"+unquote(a["view_id"])], &view)
		if ev, ok := view["evidence"].([]any); ok {
			for _, e := range ev {
				if rec, ok := e.(map[string]any); ok {
					delete(rec, "content")
				}
			}
		}
		return answer(map[string]any{"view": view}, nil)
	})
	if err := server.ServeStdio(s); err != nil {
		return 1
	}
	return 0
}

func unquote(b json.RawMessage) string {
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

// withMember adds one member to a JSON object's text.
func withMember(obj json.RawMessage, key string, val json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return obj
	}
	if val != nil {
		m[key] = val
	}
	b, _ := json.Marshal(m)
	return b
}
