package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Answer is what a target said about one fixture-format document: a
// WarrantView (as a JSON object) or a refusal. Exactly one is set.
type Answer struct {
	View    map[string]any
	Refusal *Refusal
	// Raw is View's JSON text as received, where a target keeps it
	// (Store.Get), so that number literals are compared as written.
	Raw json.RawMessage
}

// Broken is a target that did not answer as the protocol says: it exited,
// printed something that is not an answer, answered out of turn (CRASH),
// or gave no answer within the per-case timeout (TIMEOUT).
type Broken struct {
	Class  Class
	Detail string
}

func (b *Broken) Error() string { return string(b.Class) + ": " + b.Detail }

func crash(format string, a ...any) *Broken {
	return &Broken{Class: Crash, Detail: fmt.Sprintf(format, a...)}
}

func timedOut(format string, a ...any) *Broken {
	return &Broken{Class: Timeout, Detail: fmt.Sprintf(format, a...)}
}

// Target is an implementation under test. Evaluate answers one
// fixture-format document (the bytes exactly as the pack holds them); an
// error is always a *Broken. A target restarts itself after a crash or a
// timeout, so the next case starts on a clean process.
type Target interface {
	Describe() string
	Evaluate(ctx context.Context, doc []byte) (Answer, error)
	Close() error
}

// Store is what a target with write tools offers besides evaluation, so
// that ingest and retrieval are judged too: Put stores a view (as the
// fixture holds it, without evaluated_at), Get reads a snapshot back, and
// EvaluateStored computes warrant from the stored snapshot. Stores
// reports whether the target can write at all (an MCP server without the
// ingest role cannot).
type Store interface {
	Stores() bool
	Put(ctx context.Context, view json.RawMessage) (Stored, error)
	Get(ctx context.Context, propositionID, viewID string) (Answer, error)
	EvaluateStored(ctx context.Context, propositionID, viewID, evaluatedAt string) (Answer, error)
}

// Stored is a write tool's acknowledgement, or its refusal.
type Stored struct {
	PropositionID string
	ViewID        string
	Refusal       *Refusal
}

// kernelTarget is this project's own kernel, in process.
type kernelTarget struct{}

// Kernel is the target of this project's own kernel (the default).
func Kernel() Target { return kernelTarget{} }

func (kernelTarget) Describe() string { return "kernel (this project's evaluator, in process)" }
func (kernelTarget) Close() error     { return nil }

func (kernelTarget) Evaluate(_ context.Context, doc []byte) (Answer, error) {
	wv, ref := EvalDocument(doc)
	if ref != nil {
		return Answer{Refusal: ref}, nil
	}
	return Answer{View: toMap(wv)}, nil
}

// ParseTarget reads a --target value: "kernel", "eval:COMMAND",
// "mcp-stdio:COMMAND" or "mcp:URL".
func ParseTarget(spec string, opts TargetOptions) (Target, error) {
	kind, rest, _ := strings.Cut(spec, ":")
	switch kind {
	case "kernel":
		if rest != "" {
			return nil, fmt.Errorf("--target kernel takes nothing after it, got %q", spec)
		}
		return Kernel(), nil
	case "eval", "mcp-stdio":
		argv, err := SplitCommand(rest)
		if err != nil {
			return nil, fmt.Errorf("--target %s: %w", kind, err)
		}
		if kind == "eval" {
			return NewEvalTarget(argv, opts), nil
		}
		return NewMCPStdioTarget(argv, opts)
	case "mcp":
		if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
			return nil, fmt.Errorf("--target mcp:URL: want an http:// or https:// URL of an MCP endpoint, got %q", rest)
		}
		return NewMCPHTTPTarget(rest, opts)
	}
	return nil, fmt.Errorf("--target %q: want kernel, eval:'COMMAND', mcp-stdio:'COMMAND' or mcp:URL", spec)
}

// TargetOptions configure the targets that run elsewhere.
type TargetOptions struct {
	// IngestToken is sent to an mcp:URL target as a bearer token, so its
	// write tools can be judged. Never printed.
	IngestToken string
	// GroundingGraph names the grounding pack graph an MCP target holds
	// ("filesystem"): its grounding cases are asked, the others skipped.
	GroundingGraph string
}

// SplitCommand splits a command line into words the way a POSIX shell
// does for plain words, 'single' and "double" quotes and backslash
// escapes; nothing else (no variables, globs or pipes): the command runs
// without a shell.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape in the command")
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command: give the program to run, e.g. eval:'python3 my_ewp.py'")
	}
	return words, nil
}

// parseAnswer reads one answer line: a refusal or a WarrantView object.
// Anything else (not JSON, not an object) is garbage, which the caller
// reports as a crash.
func parseAnswer(line []byte) (Answer, error) {
	var obj map[string]any
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return Answer{}, crash("printed something that is not a JSON object: %s", quoteLine(line))
	}
	if refused, _ := obj["refused"].(bool); refused {
		code, _ := obj["code"].(string)
		msg, _ := obj["error"].(string)
		return Answer{Refusal: &Refusal{Refused: true, Code: code, Error: msg}}, nil
	}
	return Answer{View: obj}, nil
}

// quoteLine shows at most 200 bytes of what a target printed, quoted so
// that control characters cannot reach the terminal.
func quoteLine(b []byte) string {
	const most = 300
	s := string(b)
	if len(s) > most {
		return fmt.Sprintf("…%q (last %d of %d bytes)", s[len(s)-most:], most, len(s))
	}
	return fmt.Sprintf("%q", s)
}
