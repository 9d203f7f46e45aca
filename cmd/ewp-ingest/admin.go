package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/store"
)

const (
	initUsage = "usage: ewp-ingest init --db PATH|postgres://USER@HOST/DB"
	copyUsage = "usage: ewp-ingest copy --from PATH|URL --to PATH|URL"
)

// runInit is `ewp-ingest init --db URL`: the ledger's schema, the decision
// log's schema and the four roles in a PostgreSQL database, made
// idempotently (store.InitPostgres), and a line for each
// thing saying whether it was made now or was already there. For an
// SQLite file it makes an empty ledger: loading creates one too, but
// keeps it only when something was stored.
func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ewp-ingest init", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := fs.String("db", "", "")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return ingest.ExitOK
	} else if err != nil {
		return usageError(stderr, "init: "+err.Error())
	}
	if *db == "" || fs.NArg() > 0 {
		return usageError(stderr, initUsage)
	}
	if !store.IsPostgres(*db) {
		return initFile(ctx, *db, stdout, stderr)
	}
	before, err := inventory(ctx, *db)
	if err == nil {
		err = store.InitPostgres(ctx, *db)
	}
	var after initState
	if err == nil {
		after, err = inventory(ctx, *db)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest init: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	for _, line := range before.changes(after) {
		fmt.Fprintln(stdout, line)
	}
	return ingest.ExitOK
}

// initState is what init looks at: the two schemas and the roles.
type initState struct {
	ledger, audit bool
	roles         map[string]bool
}

func roleNames() []string {
	r := postgres.DefaultRoles
	return []string{r.Reader, r.Writer, r.Server, auditpg.DefaultOperatorRole}
}

func inventory(ctx context.Context, url string) (initState, error) {
	st := initState{roles: map[string]bool{}}
	conn, err := pgurl.Connect(ctx, url, pgurl.SchemaWork, pgurl.ReadOnly)
	if err != nil {
		return st, fmt.Errorf("connect to %s: %w", pgurl.Redact(url), pgurl.Scrub(url, err))
	}
	defer conn.Close(ctx)
	var have []string
	err = conn.QueryRow(ctx, `SELECT to_regclass('ledger_meta') IS NOT NULL, to_regclass('ewp_audit.audit_meta') IS NOT NULL,
		coalesce(array_agg(rolname) FILTER (WHERE rolname IS NOT NULL), '{}')
		FROM (SELECT rolname FROM pg_roles WHERE rolname = ANY($1)) r`, roleNames()).Scan(&st.ledger, &st.audit, &have)
	for _, r := range have {
		st.roles[r] = true
	}
	return st, err
}

// changes says, thing by thing, what init made and what it found.
func (before initState) changes(after initState) []string {
	say := func(what string, was, is bool) string {
		switch {
		case was:
			return what + ": already there"
		case is:
			return what + ": created"
		}
		return what + ": MISSING after init (report this)"
	}
	out := []string{
		say("ledger schema (tables, append-only triggers)", before.ledger, after.ledger),
		say("decision log schema ewp_audit", before.audit, after.audit),
	}
	for _, r := range roleNames() {
		out = append(out, say("role "+r, before.roles[r], after.roles[r]))
	}
	return out
}

// runCopy is `ewp-ingest copy --from A --to B` (store.Copy): every event
// of A stored again in B, in chain order, so B ends with A's chain head;
// an interrupted copy resumes.
func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ewp-ingest copy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return ingest.ExitOK
	} else if err != nil {
		return usageError(stderr, "copy: "+err.Error())
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		return usageError(stderr, copyUsage)
	}
	if *from == *to {
		return usageError(stderr, "copy: --from and --to name the same ledger")
	}
	rep, err := store.Copy(ctx, *from, *to)
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest copy: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	fmt.Fprintf(stdout, "copied %s; both ledgers have head %s\n", plural.Count(rep.Events, "event", "events"), rep.Head)
	return ingest.ExitOK
}

// initFile makes an empty SQLite ledger at path, or finds one there.
func initFile(ctx context.Context, path string, stdout, stderr io.Writer) int {
	created := newLedgerFile(path)
	l, err := store.Open(ctx, path, store.Options{Create: true})
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest init: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	l.Close()
	what := "already there"
	if created {
		what = "created, empty"
	}
	fmt.Fprintf(stdout, "ledger %s: %s\n", termtext.Escape(absPath(path)), what)
	return ingest.ExitOK
}
