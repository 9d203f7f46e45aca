// Command hooklatency measures what a Claude Code hook costs per tool
// call against a running server (ewp-mcp --http --tools FILE): the http
// hook's round trip (POST /hooks/claude-code) and the command hook's
// start and answer (ewp-hook claude-code --url, stdin to exit), each as
// p50/p90/max over n calls. Every call is a real decision, recorded.
//
//	go run ./scripts/hooklatency --url http://127.0.0.1:8765 --hook /path/to/ewp-hook [--n 200] \
//	  [--local "--db l.db --tools tools.json --policies p.cedar --agent NAME"]
//
// docs/benchmarks.md ("Client hooks") has the figures and the setup.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "", "the server's base URL")
	hook := flag.String("hook", "", "the ewp-hook binary (the command hook is skipped without it)")
	n := flag.Int("n", 200, "calls per measurement")
	tool := flag.String("tool", "Write", "the Claude Code tool the calls name")
	path := flag.String("path", "/tmp/hooklatency.txt", "the file_path they name")
	localArgs := flag.String("local", "", "with --hook: also measure the local mode, with these flags (--db … --tools … --agent …)")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "usage: hooklatency --url URL [--hook BIN] [--n N]")
		os.Exit(2)
	}
	body := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"lat","tool_use_id":"t%d-%d","cwd":"/tmp",`+
			`"tool_name":%q,"tool_input":{"file_path":%q,"content":"x"}}`, time.Now().UnixNano(), i, *tool, *path))
	}
	report("http hook (POST /hooks/claude-code)", measure(*n, func(i int) error {
		resp, err := http.Post(strings.TrimSuffix(*url, "/")+"/hooks/claude-code", "application/json", bytes.NewReader(body(i)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}))
	if *hook == "" {
		return
	}
	report("command hook (ewp-hook claude-code --url, start to exit)", measure(*n, func(i int) error {
		return runHook(*hook, []string{"claude-code", "--url", *url}, body(i))
	}))
	if *localArgs != "" {
		args := append([]string{"claude-code"}, strings.Fields(*localArgs)...)
		report("command hook, local mode (ewp-hook claude-code --db …)", measure(*n, func(i int) error {
			return runHook(*hook, args, body(i))
		}))
	}
}

func runHook(bin string, args []string, stdin []byte) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err == nil && !bytes.Contains(out, []byte("permissionDecision")) {
		err = fmt.Errorf("answer %s", out)
	}
	return err
}

func measure(n int, call func(int) error) []time.Duration {
	for i := 0; i < 5; i++ { // warm the connection pool, the page cache and the server
		call(-i)
	}
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := call(i); err != nil {
			fmt.Fprintln(os.Stderr, "hooklatency:", err)
			os.Exit(1)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds
}

func report(what string, ds []time.Duration) {
	q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
	fmt.Printf("%-58s n=%d  p50 %6.2f ms  p90 %6.2f ms  max %6.2f ms\n", what, len(ds),
		ms(q(0.5)), ms(q(0.9)), ms(ds[len(ds)-1]))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
