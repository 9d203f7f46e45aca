// Command ewp-audit is the operator's side of the accountable gate: it
// reads the decision log ewp-mcp writes (list, show, export, verify),
// answers the decisions that asked for confirmation (approve, reject). keygen makes
// the operator key that signs approvals: the server honours only
// approvals signed by a key in its operator keys file.
// Only an operator at a shell creates approvals; the agent's MCP session
// never can. Run `ewp-audit --help` for usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/release"
)

// Exit codes (documented in usage).
const (
	exitOK       = 0
	exitNotFound = 1 // no such decision or approval
	exitUsage    = 2
	exitRefused  = 3 // the decision cannot be answered so
	exitLog      = 4 // the log could not be opened, read or written
	exitBroken   = 5 // verify found a break
	exitInternal = 6
)

func main() {
	release.AnswerVersion("ewp-audit")
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// env is what every subcommand gets: its streams and clock.
type env struct {
	ctx            context.Context
	stdout, stderr io.Writer
	now            func() time.Time
}

type command struct {
	run   func(e *env, args []string) int
	usage string
}

var commands = map[string]command{
	"approve": {runApprove, usageApprove},
	"reject":  {runReject, usageReject},
	"list":    {runList, usageList},
	"show":    {runShow, usageShow},
	"verify":  {runVerify, usageVerify},
	"export":  {runExport, usageExport},
	"keygen":  {runKeygen, usageKeygen},
	"agents":  {runAgents, usageAgents},
}

// run is main without the process: tests call it in process too.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ewp-audit: internal error: %s\nThis is a bug; please report it with the command line.\n", esc(fmt.Sprint(r)))
			code = exitInternal
		}
	}()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		return usageError(stderr, fmt.Sprintf("unknown command %q; the commands are approve, reject, list, show, verify, export, keygen, agents", args[0]))
	}
	return c.run(&env{ctx: ctx, stdout: stdout, stderr: stderr, now: time.Now}, args[1:])
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "ewp-audit: %s\nRun 'ewp-audit --help' for usage and examples.\n", msg)
	return exitUsage
}

// logFlags are the flags that find the log, shared by every subcommand.
type logFlags struct {
	db, audit string
	json      bool
}

func (lf *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&lf.db, "db", "", "")
	fs.StringVar(&lf.audit, "audit", "", "")
	fs.BoolVar(&lf.json, "json", false, "")
}

// where repeats the flag that found the log, for the commands printed as
// hints.
func (lf *logFlags) where() string {
	if lf.audit != "" {
		return "--audit " + esc(pgurl.Redact(lf.audit))
	}
	return "--db " + esc(pgurl.Redact(lf.db))
}

// open opens the log --audit names, or the one beside --db (in the same
// PostgreSQL database for a postgres:// URL); read-only for the reading
// commands.
func (lf *logFlags) open(e *env, name string, readOnly bool) (auditstore.Log, int) {
	if _, err := auditstore.Where(lf.db, lf.audit); err != nil {
		return nil, usageError(e.stderr, name+": "+err.Error())
	}
	l, err := auditstore.Open(e.ctx, lf.db, lf.audit, auditstore.Options{ReadOnly: readOnly, Now: e.now})
	if err != nil {
		printErr(e, name, err)
		return nil, exitLog
	}
	return l, -1
}

// parse parses flags and positional arguments in any order ("approve ID
// --once" and "approve --once ID"). --help prints the command's usage.
func parse(e *env, fs *flag.FlagSet, text string, args []string) ([]string, int) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, text)
			return nil, exitOK
		} else if err != nil {
			return nil, usageError(e.stderr, fs.Name()+": "+err.Error())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, -1
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// failed reports a store error with the exit code its kind calls for.
func failed(e *env, name string, err error) int {
	printErr(e, name, err)
	switch {
	case errors.Is(err, audit.ErrNotFound):
		return exitNotFound
	case errors.Is(err, audit.ErrNotPending), errors.Is(err, audit.ErrAnswered), errors.Is(err, audit.ErrInvalidApproval):
		return exitRefused
	}
	return exitLog
}

// printErr prints an error of command name. Errors quote ids and names
// from the log, which an agent may have written: escaped.
func printErr(e *env, name string, err error) {
	fmt.Fprintf(e.stderr, "ewp-audit %s: %s\n", name, esc(err.Error()))
}

// esc is the one escaping every string from the log goes through before
// it is printed as text (JSON output goes through termtext.JSONWriter).
func esc(s string) string { return termtext.Escape(s) }

// parseTime reads an instant (RFC 3339) or a duration: ago for --since
// and list's --until (past), ahead for approve's --until (future).
func parseTime(s string, now time.Time, ahead bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 instant (2026-09-21T18:00:00Z) nor a positive duration (90m, 2h)", s)
	}
	if ahead {
		return now.Add(d), nil
	}
	return now.Add(-d), nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
