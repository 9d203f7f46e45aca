package main

const usageLog = `  --db LEDGER      the evidence ledger ewp-mcp serves; the decision log is
                   LEDGER.audit beside it (ewp.sqlite → ewp.sqlite.audit), or for a
                   postgres:// URL in the same database (schema ewp_audit)
  --audit PATH     the decision log itself (as ewp-mcp --audit PATH)
  --json           machine-readable output for scripts
  -h, --help       show this help
`

const usageApprove = `ewp-audit approve — let a decision that asked for confirmation go ahead

USAGE
  ewp-audit approve DECISION_ID --once [--any-agent] [--key FILE] [--approver NAME] [--until TIME] [--note TEXT]
  ewp-audit approve DECISION_ID --scope [--scope-proposition P] [--scope-kind K]
        [--scope-concepts A,B] [--scope-tool T] --until TIME [--any-agent] [--key FILE] [--note TEXT]

When may_act answers REQUIRE_CONFIRMATION it gives a decision_id. Look at it
(ewp-audit show DECISION_ID), then approve it. The command prints the
approval_id; the agent repeats its may_act call with "approval_id", and the
gate lifts REQUIRE_CONFIRMATION to MAY_ACT only if the approval covers the
call. Evidence is judged afresh on every call: an approval never lifts DENY.

  --once                 exactly the gate input it answers (same proposition,
                         action id, kind, risk, reversible, concepts,
                         cardinality, min_depth, tool, arguments, risk
                         policy), one may_act call; a second call is refused
                         (EWP_REFUSE_APPROVAL_USED)
  --scope                actions like it until --until, as often as needed:
  --scope-proposition P    the proposition (default: the decision's; none
                           for a decision that judged none, e.g. a guard-only
                           file deletion)
  --scope-kind K           only this action kind
  --scope-concepts A,B     only actions whose concepts are all among these
  --scope-tool T           only this tool
                         (any --scope-* flag implies --scope; name at least
                         one of kind, concepts, tool; the scope must cover
                         the decision it answers, and never covers more
                         risk, less reversibility or a laxer risk policy)
  --any-agent            let any agent present it: by default an approval is
                         bound to the agent the decision was made for, and
                         another agent presenting it is refused
                         (EWP_REFUSE_APPROVAL_AGENT); the binding is signed
  --until TIME           expiry: RFC 3339 (2026-09-21T18:00:00Z) or a
                         duration from now (90m, 2h); required for a scope;
                         at most --max-lifetime ahead
  --max-lifetime DUR     the longest until accepted (default 24h); the gate
                         honours any approval at most its own maximum after
                         creation (ewp-mcp --approval-max-lifetime, 24h)
  --key FILE             the operator key that signs the approval (default
                         ~/.ewp/operator.key, made by ewp-audit keygen); the
                         server honours only approvals signed by a key in its
                         --operator-keys file
  --approver NAME        who decides (default: the key's name; if given, the
                         key's name or NAME/SOMEONE)
  --note TEXT            why, for the record
` + usageLog + `
A decision is answered once: approving or rejecting it again is refused.
Only REQUIRE_CONFIRMATION decisions can be approved. Identical retries of
a pending call by one caller are one item (list --pending counts them):
answering any of them answers it, and the others are closed as rejections
noting they were superseded by this answer.
`

const usageReject = `ewp-audit reject — refuse a decision that asked for confirmation

USAGE
  ewp-audit reject DECISION_ID --note TEXT [--key FILE] [--approver NAME]
  ewp-audit reject --stale DURATION --note TEXT [--key FILE] [--approver NAME]

A rejection is recorded as the decision's answer; an agent presenting it is
refused (EWP_REFUSE_APPROVAL_REJECTED) with the note. "Request changes" is a
rejection whose note says what to change; the agent's next call is a new
decision.

  --note TEXT       why not, or what to change (required)
  --stale DURATION  instead of one DECISION_ID: reject every pending call
                    whose latest retry is older than DURATION (e.g. 1h)
  --key FILE        the operator key that signs it (default ~/.ewp/operator.key)
  --approver NAME   who decides (default: the key's name)
` + usageLog

const usageList = `ewp-audit list — the decisions on record, newest first

Decisions are listed in the order they were recorded, so a script that
continues with --after the last one it saw never misses a later one.

USAGE
  ewp-audit list [--pending] [--since T] [--until T] [--outcome O]
        [--proposition P] [--limit N] [--after DECISION_ID] [--oldest-first]
  ewp-audit list --pending --watch [--interval 5s]

  --pending          REQUIRE_CONFIRMATION decisions not yet answered: the
                     operator's inbox; identical retries by one caller are
                     one row, its newest, "asked N times"
  --since T          from T on (RFC 3339, or a duration ago: 1h, 30m)
  --until T          before T (same forms)
  --outcome O        MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED (refused
                     calls, with their code) or ANSWERED (check_grounding)
  --proposition P    decisions about one proposition
  --limit N          at most N (default 100); a full page ends with the
                     --after to continue with
  --after ID         continue after this decision (in the listing order)
  --oldest-first     oldest first
  --watch            with --pending: list again every --interval (1s to 1h,
                     default 5s), clearing a terminal first, until Ctrl-C
                     or end of input (Ctrl-D)
` + usageLog

const usageShow = `ewp-audit show — one decision and its approval trail

USAGE
  ewp-audit show DECISION_ID | APPROVAL_ID

Prints the decision (caller, proposition and view, action, what it was judged
under, every layer's verdict and reasons, the outcome), the approval it
presented if any, and its answer: who approved or rejected it, when, what the
approval covers, whether a once approval was used and by which decision, and
every call that presented it. Given an APPROVAL_ID, shows the decision it
answers.
` + usageLog

const usageVerify = `ewp-audit verify — check that nobody edited the decision log

USAGE
  ewp-audit verify [--head SEQ:HASH]

Walks the hash chain and checks every decision, approval and approval use
against the event that recorded it; finds rows edited, deleted or inserted
behind the chain, and missing or added triggers. Prints the head (SEQ:HASH):
keep it somewhere else, and a later --head proves nothing was cut off the end
or rewritten since. It reads one snapshot, so it may run beside ewp-mcp.

  --head SEQ:HASH   also require the chain to hold this head unchanged
` + usageLog

const usageExport = `ewp-audit export — the decisions as JSON Lines, for a SIEM

USAGE
  ewp-audit export [--since T] [--until T] [--outcome O] [--proposition P] [--pending]

One decision per line, oldest first, in the form decision_get returns; a
tool call an entrance forwarded (ewp-gateway, the hooks) also has "results":
what the call did (ok, tool_error, failed, with the sha256 of the result).
It streams, so memory stays flat for any size of log. The count goes to stderr.
Filters as for list.
` + usageLog

const usage = `ewp-audit — the operator's side of the accountable gate

ewp-mcp records every may_act and check_grounding call in a decision log
before it answers (refusals too). A REQUIRE_CONFIRMATION answer carries a
decision_id; an operator answers it here, never the agent: the agent's MCP
session cannot create approvals, whatever its role.

USAGE
  ewp-audit list [--pending] [filters]        decisions on record, newest first
  ewp-audit show ID                           one decision and its approval trail
  ewp-audit keygen [--out FILE]               make the operator key approvals are signed with
  ewp-audit approve ID --once [--key FILE]    approve exactly this action, once
  ewp-audit approve ID --scope --until TIME [--key FILE]
                                              approve actions like it until TIME
  ewp-audit reject ID --note TEXT [--key FILE]
  ewp-audit verify [--head SEQ:HASH]          check the hash chain
  ewp-audit export [filters]                  JSON Lines, for a SIEM
  ewp-audit agents add NAME [--group G]...    make an agent identity (prints its credential once)
  ewp-audit agents list | revoke NAME         the register of agents

approve and reject sign with the operator key (--key, default
~/.ewp/operator.key); the server honours only approvals signed by a key in
its operator keys file (ewp-mcp --operator-keys), and only as its log's
hash chain recorded them. On PostgreSQL, log in as a member of ewp_operator
to approve: the replicas' role (ewp_server) cannot store approvals.

Every command takes --db LEDGER (the log is LEDGER.audit beside it, as
ewp-mcp finds it, or in the same database for a postgres:// URL) or
--audit PATH, and --json. 'ewp-audit COMMAND --help'
explains each; 'ewp-audit --version' prints the protocol, policy and lock.

EXAMPLES
  # Once: make your key; add the line it prints to the server's --operator-keys file.
  ewp-audit keygen

  # Give an agent its identity; its credential is printed once.
  ewp-audit agents add builder --group ci --db ewp.sqlite

  # The inbox: what waits for a person?
  ewp-audit list --db ewp.sqlite --pending

  # Look, then let the agent run this exact action once.
  ewp-audit show --db ewp.sqlite 0192f1c4-…
  ewp-audit approve --db ewp.sqlite 0192f1c4-… --once --note "ticket OPS-12"

  # Let migrations on this proposition through for the maintenance window.
  ewp-audit approve --db ewp.sqlite 0192f1c4-… --scope --scope-kind migrate --until 2h

  # Say no, and what to change.
  ewp-audit reject --db ewp.sqlite 0192f1c4-… --note "run it on the replica first"

  # For scripts: the approval id.
  ewp-audit approve --db ewp.sqlite 0192f1c4-… --once --key ci.key --json | jq -r .approval_id

  # Nightly: check the chain against yesterday's head, ship the day to the SIEM.
  ewp-audit verify --db ewp.sqlite --head "$(cat audit.head)"
  ewp-audit export --db ewp.sqlite --since 24h > decisions.jsonl

EXIT CODES
  0  done (verify: the log is intact)
  1  no such decision or approval
  2  usage error (bad flag, missing --db/--audit, bad time)
  3  refused: the decision does not await confirmation, is already answered,
     or the approval is malformed (the message names the rule)
  4  the log could not be opened, read or written (a missing log is not
     created: ewp-mcp creates it), or is of another schema version than
     this build's (no build converts one)
  5  verify: the log is broken (the first broken entry is named)
  6  internal error
`

const usageKeygen = `ewp-audit keygen — make an operator key that signs approvals

USAGE
  ewp-audit keygen [--out FILE] [--name NAME] [--json]

An approval counts only when it is signed by an operator's Ed25519 key and
the server (ewp-mcp --operator-keys FILE) trusts that key: a process that
can write the decision log but holds no operator key cannot mint one.
keygen writes a new private key to FILE (default ~/.ewp/operator.key; its
directory is made 0700, the file 0600, an existing file is never replaced)
and prints the public key line to add to the server's operator keys file:

  ed25519 BASE64-PUBLIC-KEY NAME

The private key is never printed. Keep it where the agent cannot read it:
an agent on stdio runs as the server's OS user.

  --out FILE    where to write the private key
  --name NAME   the approver the key signs as (default: your login name)
  --json        print key_file, key_id, name and public_line as JSON
`

const usageAgents = `ewp-audit agents — the agent identities that may call the gate

USAGE
  ewp-audit agents add NAME [--group G]... [--ingest] --db LEDGER
  ewp-audit agents list --db LEDGER
  ewp-audit agents revoke NAME --db LEDGER

An agent calls the gate over HTTP with its credential as a bearer token
(Authorization: Bearer ewp_agent_…); every decision records the agent it
was judged for, and an approval answers for that agent only (approve
--any-agent widens it). The register lives in the decision log's database.

add prints the new credential ONCE: ewp_agent_ followed by 43 characters
(32 random bytes, base64url). Only its sha256 is stored; a lost credential
is replaced by revoking the agent and adding a new one under another name.

  NAME         1 to 64 ASCII letters, digits, '.', '_' or '-', beginning
               with a letter or digit; not "anonymous"; never reused, even
               after a revocation
  --group G    a group the agent belongs to (repeat for several, at most
               32): policies and budgets can name Group::"G"
  --ingest     the credential also carries the ingest role (it may write
               evidence and set a risk policy)

Beside an existing SQLite ledger, add creates the decision log when the
server has not yet (a mistyped --db is still an error; --audit PATH must
exist).

list shows every agent, revoked ones too, with the start of its
credential's sha256. revoke takes effect on the next request: nothing
caches a credential lookup. On PostgreSQL, add and revoke as a member of
ewp_operator (the servers' role ewp_server only reads the register).
` + usageLog + `
EXAMPLES
  ewp-audit agents add builder --group ci --db ewp.sqlite
  ewp-audit agents add loader --ingest --db ewp.sqlite --json | jq -r .credential
  ewp-audit agents list --db ewp.sqlite
  ewp-audit agents revoke builder --db ewp.sqlite

EXIT CODES
  0 done, 1 no such agent (revoke), 2 usage error (a bad name), 3 the name
  is taken, 4 the log could not be opened or written
`
