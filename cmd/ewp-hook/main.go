// Command ewp-hook is the gate inside Claude Code: `ewp-hook claude-code`
// is a command hook (PreToolUse, PostToolUse, PostToolUseFailure) that
// reads the hook input on stdin and forwards it to an ewp-mcp or
// ewp-gateway server's /hooks/claude-code endpoint, answering what the
// server answers. Whatever fails, it exits 2 with the reason on stderr,
// which Claude Code takes as a block. `ewp-hook claude-code install`
// prints (or writes) the settings that install it, or the http hook,
// with every failure a block. See docs/hooks.md.
//
// Claude Code starts it before every tool call, so the forwarding path
// does no more than read, post and print; the local mode (--db) opens the
// ledger and the log and builds the gate as ewp-mcp does.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes. 2 is Claude Code's "block": every failure uses it.
const (
	exitOK    = 0
	exitBlock = 2
)

const usage = `ewp-hook: the EWP gate as a Claude Code hook.

  ewp-hook claude-code --url URL [--token-file FILE]
      A command hook: reads Claude Code's hook JSON on stdin, asks the
      server at URL (ewp-mcp --http --tools FILE, or ewp-gateway --http)
      and prints its answer. The agent's credential is $EWP_AGENT_TOKEN
      or the first line of --token-file. Any failure exits 2 (a block).

  ewp-hook claude-code --db LEDGER --tools FILE --agent NAME [--policies FILE]
                       [--call-policies FILE] [--budgets FILE]
                       [--audit PATH] [--operator-keys FILE]
      The same decision over a local ledger and decision log, without a
      server: NAME must be a live agent of the log (ewp-audit agents add).
      --policies, --call-policies and --budgets are ewp-mcp's (budgets
      are counted in the decision log).

  ewp-hook claude-code install (--url URL [--command] | --db LEDGER --tools FILE --agent NAME ...)
                               [--write] [--settings FILE]
      Prints the "hooks" settings block for PreToolUse, PostToolUse and
      PostToolUseFailure, with absolute paths and "onFailure": "block"
      on every hook; --write merges it into .claude/settings.json (or
      --settings FILE). The http hook by default; --command for the
      command hook (this binary, forwarding to --url); with --db, the
      command hook deciding locally.

Flags:
  --url URL          the server's base URL, e.g. http://127.0.0.1:8765
  --token-file FILE  the agent credential (else $EWP_AGENT_TOKEN)
  --timeout SECONDS  how long to wait for the server (default 10)
`

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if wantsHelp(args) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if len(args) == 0 || args[0] != "claude-code" {
		fmt.Fprint(stderr, usage)
		return exitBlock
	}
	args = args[1:]
	if len(args) > 0 && args[0] == "install" {
		return install(args[1:], stdout, stderr)
	}
	return forward(args, stdin, stdout, stderr)
}

// wantsHelp is whether args ask for the usage (help, -h, --help anywhere
// before a "--"): a person reading it, never a hook, so it exits 0.
func wantsHelp(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-h", a == "-help", a == "--help", i == 0 && a == "help":
			return true
		}
	}
	return false
}

// block prints why the tool is blocked and returns exitBlock.
func block(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "ewp-hook: blocked: "+format+"\n", a...)
	return exitBlock
}
