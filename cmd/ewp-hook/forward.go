package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ewp-go/ewp/internal/hookflags"
	"github.com/ewp-go/ewp/internal/termtext"
)

// Bounds of the forwarding path: what it reads of stdin (hook.MaxBody,
// spelled out so this path does not link package hook) and of the
// server's answer.
const (
	maxInput  = 4 << 20
	maxAnswer = 64 << 10
	// endpoint is hook.PathClaudeCode.
	endpoint = "/hooks/claude-code"
	// tokenEnv holds the agent's credential.
	tokenEnv = "EWP_AGENT_TOKEN"
)

type forwardFlags struct {
	url, tokenFile string
	timeout        int
	// The local mode: a ledger and decision log instead of a server.
	local hookflags.Local
}

func parseForward(args []string, stderr io.Writer) (forwardFlags, bool) {
	var f forwardFlags
	fs := flag.NewFlagSet("ewp-hook claude-code", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.url, "url", "", "")
	fs.StringVar(&f.tokenFile, "token-file", "", "")
	fs.IntVar(&f.timeout, "timeout", 10, "")
	f.local.Register(fs)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return f, false
	}
	return f, (f.url != "") != (f.local.DB != "") && f.timeout > 0
}

// forward sends the hook input to the server and prints its answer.
func forward(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, ok := parseForward(args, stderr)
	if !ok {
		return block(stderr, "usage: ewp-hook claude-code (--url URL [--token-file FILE] | --db LEDGER --tools FILE --agent NAME) [--timeout SECONDS]")
	}
	if f.local.DB != "" {
		return runLocal(args, stdin, stdout, stderr)
	}
	body, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil || len(body) > maxInput {
		return block(stderr, "the hook input is unreadable or over %d bytes", maxInput)
	}
	token, err := agentToken(f.tokenFile)
	if err != nil {
		return block(stderr, "%s", err)
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(f.url, "/")+endpoint, bytes.NewReader(body))
	if err != nil {
		return block(stderr, "--url: %s", termtext.Escape(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: time.Duration(f.timeout) * time.Second}).Do(req)
	if err != nil {
		return block(stderr, "the gate at %s did not answer: %s", termtext.Escape(f.url), termtext.Escape(redactErr(err, token)))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(answer) > maxAnswer {
		return block(stderr, "the gate's answer is unreadable or over %d bytes", maxAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		return block(stderr, "the gate answered %s: %s", resp.Status, termtext.Escape(string(bytes.TrimSpace(answer))))
	}
	if !json.Valid(answer) || !bytes.HasPrefix(bytes.TrimSpace(answer), []byte("{")) {
		return block(stderr, "the gate's answer is not a JSON object")
	}
	stdout.Write(answer)
	return exitOK
}

// localBin is the local mode's binary, beside this one.
const localBin = "ewp-hook-local"

// runLocal runs ewp-hook-local with the same arguments and streams: the
// local mode links what the forwarding path must not (see its doc).
func runLocal(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	self, err := selfPath()
	if err != nil {
		return block(stderr, "%s", err)
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(self), localBin), append([]string{"claude-code"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return exitBlock // it said why on stderr
		}
		return block(stderr, "the local mode needs %s beside ewp-hook: %s", localBin, termtext.Escape(err.Error()))
	}
	return exitOK
}

// agentToken is the credential from --token-file's first line, else the
// environment; "" when neither gives one (the server then decides
// whether it takes anonymous callers).
func agentToken(file string) (string, error) {
	if file == "" {
		return os.Getenv(tokenEnv), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// redactErr is err's text without the token, should a transport ever
// quote a header.
func redactErr(err error, token string) string {
	s := err.Error()
	if token != "" {
		s = strings.ReplaceAll(s, token, "[token]")
	}
	return s
}
