package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
)

// runAgents is `ewp-audit agents add|list|revoke`: the operator's register
// of agent identities, kept in the decision log's database.
func runAgents(e *env, args []string) int {
	if len(args) == 0 {
		return usageError(e.stderr, "agents: say add, list or revoke")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(e.stdout, usageAgents)
		return exitOK
	case "add":
		return agentsAdd(e, args[1:])
	case "list":
		return agentsList(e, args[1:])
	case "revoke":
		return agentsRevoke(e, args[1:])
	}
	return usageError(e.stderr, fmt.Sprintf("agents: unknown subcommand %q; the subcommands are add, list, revoke", args[0]))
}

// groupsFlag collects repeated --group flags.
type groupsFlag []string

func (g *groupsFlag) String() string { return strings.Join(*g, ",") }

func (g *groupsFlag) Set(v string) error {
	*g = append(*g, v)
	return nil
}

func agentsAdd(e *env, args []string) int {
	var f logFlags
	var groups groupsFlag
	fs := flag.NewFlagSet("agents add", flag.ContinueOnError)
	f.register(fs)
	fs.Var(&groups, "group", "")
	ingest := fs.Bool("ingest", false, "")
	pos, code := parse(e, fs, usageAgents, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(e.stderr, "agents add: give exactly one NAME")
	}
	cred, sum, err := audit.NewAgentCredential()
	if err != nil {
		printErr(e, "agents add", err)
		return exitInternal
	}
	r := &audit.AgentRecord{Name: pos[0], Groups: groups, Ingest: *ingest, CredentialSHA256: sum, CreatedAt: e.now().UTC()}
	// The record's rules are checked before the log is opened: a bad name
	// is a usage error and changes nothing.
	if err := r.CheckAgent(e.now()); err != nil {
		return usageError(e.stderr, "agents add: "+esc(strings.TrimPrefix(err.Error(), audit.ErrInvalidAgent.Error()+": ")))
	}
	l, code := f.openForAgents(e)
	if code >= 0 {
		return code
	}
	defer l.Close()
	if err := l.AddAgent(e.ctx, r); err != nil {
		if errors.Is(err, audit.ErrAgentExists) {
			printErr(e, "agents add", err)
			return exitRefused
		}
		return failed(e, "agents add", operatorHint(err, "add agents"))
	}
	if f.json {
		return printJSON(e, struct {
			*audit.AgentRecord
			Credential string `json:"credential"`
		}{r, cred})
	}
	fmt.Fprintf(e.stdout, "added agent %s%s\n", esc(r.Name), groupsText(r))
	fmt.Fprintf(e.stdout, "credential (shown once, only its sha256 is kept; give it to the agent as its bearer token):\n%s\n", cred)
	return exitOK
}

// operatorHint adds, to PostgreSQL's permission refusal, which role may.
func operatorHint(err error, what string) error {
	if strings.Contains(err.Error(), "SQLSTATE 42501") {
		return fmt.Errorf("%w\nlog in as a member of ewp_operator to %s: the replicas' role (ewp_server) cannot", err, what)
	}
	return err
}

func groupsText(r *audit.AgentRecord) string {
	var s string
	if len(r.Groups) > 0 {
		s += " (groups " + esc(strings.Join(r.Groups, ", ")) + ")"
	}
	if r.Ingest {
		s += ", with the ingest role"
	}
	return s
}

func agentsList(e *env, args []string) int {
	var f logFlags
	fs := flag.NewFlagSet("agents list", flag.ContinueOnError)
	f.register(fs)
	pos, code := parse(e, fs, usageAgents, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return usageError(e.stderr, fmt.Sprintf("agents list: unexpected argument %q", esc(pos[0])))
	}
	l, code := f.open(e, "agents list", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	rs, err := l.ListAgents(e.ctx)
	if err != nil {
		return failed(e, "agents list", err)
	}
	if f.json {
		if rs == nil {
			rs = []audit.AgentRecord{}
		}
		return printJSON(e, struct {
			Agents []audit.AgentRecord `json:"agents"`
		}{rs})
	}
	if len(rs) == 0 {
		fmt.Fprintln(e.stdout, "no agents; add one with `ewp-audit agents add NAME`")
		return exitOK
	}
	for i := range rs {
		r := &rs[i]
		state := "live"
		if !r.RevokedAt.IsZero() {
			state = "revoked " + r.RevokedAt.Format(time.RFC3339)
		}
		groups := "-"
		if len(r.Groups) > 0 {
			groups = strings.Join(r.Groups, ",")
		}
		ingest := ""
		if r.Ingest {
			ingest = "  ingest"
		}
		fmt.Fprintf(e.stdout, "%-24s  %-24s  created %s  %s  sha256 %s…%s\n", esc(r.Name), esc(groups),
			r.CreatedAt.Format(time.RFC3339), state, esc(prefix(r.CredentialSHA256, 12)), ingest)
	}
	return exitOK
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func agentsRevoke(e *env, args []string) int {
	var f logFlags
	fs := flag.NewFlagSet("agents revoke", flag.ContinueOnError)
	f.register(fs)
	pos, code := parse(e, fs, usageAgents, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(e.stderr, "agents revoke: give exactly one NAME")
	}
	l, code := f.open(e, "agents revoke", false)
	if code >= 0 {
		return code
	}
	defer l.Close()
	at := e.now().UTC()
	if err := l.RevokeAgent(e.ctx, pos[0], at); err != nil {
		return failed(e, "agents revoke", operatorHint(err, "revoke agents"))
	}
	if f.json {
		return printJSON(e, struct {
			Name    string    `json:"name"`
			Revoked time.Time `json:"revoked_at"`
		}{pos[0], at})
	}
	fmt.Fprintf(e.stdout, "revoked agent %s: its credential is refused from the next request on\n", esc(pos[0]))
	return exitOK
}

// agentText is a decision's agent as show prints it ("" for a decision
// recorded before agent identities).
func agentText(d *audit.Decision) string {
	if d.Agent == "" {
		return ""
	}
	if len(d.AgentGroups) == 0 {
		return d.Agent
	}
	return d.Agent + " (groups " + strings.Join(d.AgentGroups, ", ") + ")"
}

// bindingText is what agent an approval is bound to.
func bindingText(a *audit.Approval) string {
	switch {
	case a.AnyAgent:
		return "any agent (--any-agent)"
	case a.Agent != "":
		return "agent " + a.Agent
	}
	return ""
}

// openForAgents opens the log for agents add, which may come before the
// server ever ran: beside an existing SQLite ledger (--db) the log is
// created when missing, as ewp-mcp would create it. A mistyped --db
// names no ledger and is still an error; --audit is never created.
func (lf *logFlags) openForAgents(e *env) (auditstore.Log, int) {
	create := false
	if lf.audit == "" && lf.db != "" && !auditstore.IsPostgres(lf.db) {
		if st, err := os.Stat(lf.db); err == nil && st.Mode().IsRegular() {
			create = true
		}
	}
	if !create {
		return lf.open(e, "agents add", false)
	}
	l, err := auditstore.Open(e.ctx, lf.db, "", auditstore.Options{Create: true, Now: e.now})
	if err != nil {
		printErr(e, "agents add", err)
		return nil, exitLog
	}
	return l, -1
}
