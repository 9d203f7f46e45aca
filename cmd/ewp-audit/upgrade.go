package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/plural"
)

// runUpgrade brings a decision log file written by an older release to
// this build's schema in place (sqlite.Upgrade), keeping its chain head.
func runUpgrade(e *env, args []string) int {
	var f logFlags
	fs := flag.NewFlagSet("upgrade", flag.ContinueOnError)
	f.register(fs)
	pos, code := parse(e, fs, usageUpgrade, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return usageError(e.stderr, fmt.Sprintf("upgrade: unexpected argument %q", pos[0]))
	}
	where, err := auditstore.Where(f.db, f.audit)
	if err != nil {
		return usageError(e.stderr, "upgrade: "+err.Error())
	}
	if auditstore.IsPostgres(where) {
		return upgradePostgres(e, &f)
	}
	rep, err := sqlite.Upgrade(e.ctx, where, sqlite.Options{})
	if err != nil {
		printErr(e, "upgrade", err)
		var brk *sqlite.Break
		if errors.As(err, &brk) {
			return exitBroken
		}
		return exitLog
	}
	if f.json {
		return printJSON(e, rep)
	}
	if rep.Upgraded {
		fmt.Fprintf(e.stdout, "upgraded %s from schema version %d to %d: %s (%s, their bodies in %s; %s, %s), all verified before and after\nhead %s (unchanged)\n",
			rep.Path, rep.From, rep.To, plural.Count(rep.Events, "event", "events"), plural.Count(rep.Decisions, "decision", "decisions"),
			plural.Count(rep.BodyRows, "row", "rows"), plural.Count(rep.Approvals, "approval", "approvals"),
			plural.Count(rep.Uses, "approval use", "approval uses"), rep.HeadAfter)
	} else {
		fmt.Fprintf(e.stdout, "%s is already schema version %d: nothing to do\nhead %s\n", rep.Path, rep.To, rep.HeadAfter)
	}
	return exitOK
}

// upgradePostgres answers for a log in PostgreSQL: its schema has had one
// version, which this build reads, so there is nothing to do; it prints
// the head, as for a current file.
func upgradePostgres(e *env, f *logFlags) int {
	l, code := f.open(e, "upgrade", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	head, err := l.Head(e.ctx)
	if err != nil {
		return failed(e, "upgrade", err)
	}
	if f.json {
		return printJSON(e, struct {
			Path     string     `json:"path"`
			From     int        `json:"from_version"`
			To       int        `json:"to_version"`
			Upgraded bool       `json:"upgraded"`
			Before   audit.Head `json:"head_before"`
			After    audit.Head `json:"head_after"`
		}{l.Path(), postgres.SchemaVersion, postgres.SchemaVersion, false, head, head})
	}
	fmt.Fprintf(e.stdout, "the PostgreSQL decision log in %s is schema version %d, which this build reads: nothing to upgrade\nhead %s\n", l.Path(), postgres.SchemaVersion, head)
	return exitOK
}
