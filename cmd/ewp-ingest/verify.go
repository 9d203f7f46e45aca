package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/store"
)

const verifyUsage = "usage: ewp-ingest verify --db PATH|URL [--head SEQ:HASH] [--json]"

// verifyHelp is `ewp-ingest verify --help`.
const verifyHelp = `ewp-ingest verify — check a ledger's hash chain

USAGE
  ewp-ingest verify --db PATH|URL [--head SEQ:HASH] [--json]

Opens the ledger read-only (it never creates or changes a file) and checks
every event of the hash chain and every stored row against it; the first
broken event is named.

FLAGS
  --db PATH|URL      the ledger: an SQLite file or a postgres:// URL
  --head SEQ:HASH    a chain head kept earlier (every ewp-ingest run prints
                     one): the ledger must still hold that event with that
                     hash, so a history cut off at its end is found too
  --json             print one machine-readable JSON report on stdout
  -h, --help         show this help

EXAMPLE
  ewp-ingest verify --db ewp.sqlite --head 1234:9f86d081884c7d65...

EXIT CODES
  0  the chain is whole (and holds the kept head)
  2  usage error
  4  the ledger could not be opened or read
  5  the ledger is broken, or does not hold the kept head
`

// runVerify is `ewp-ingest verify --db PATH [--head SEQ:HASH] [--json]`.
// It opens the ledger read-only, so verifying can never create or change a
// file. With --head it also proves that the ledger still holds the event a
// pipeline kept (as ewp-ingest printed it): a history cut off at its end
// leaves a shorter ledger that verifies on its own, but not against the
// head kept before the cut.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ewp-ingest verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := fs.String("db", "", "")
	asJSON := fs.Bool("json", false, "")
	headArg := fs.String("head", "", "")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, verifyHelp)
		return ingest.ExitOK
	} else if err != nil {
		return usageError(stderr, "verify: "+err.Error())
	}
	if *db == "" || fs.NArg() > 0 {
		return usageError(stderr, verifyUsage)
	}
	var kept *ledger.Head
	if *headArg != "" {
		h, err := ledger.ParseHead(*headArg)
		if err != nil {
			return usageError(stderr, "verify --head: "+err.Error())
		}
		kept = &h
	}
	l, err := store.Open(ctx, *db, store.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest verify: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	if err == nil && kept != nil {
		err = l.VerifyHead(ctx, *kept)
	}
	var brk *ledger.Break
	if err != nil && !errors.As(err, &brk) {
		fmt.Fprintf(stderr, "ewp-ingest verify: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	report(rep, kept, brk, *asJSON, stdout)
	if brk != nil {
		if !*asJSON {
			fmt.Fprintf(stderr, "ewp-ingest verify: %s\n", termtext.Escape(brk.Error()))
		}
		return ingest.ExitBroken
	}
	return ingest.ExitOK
}

// report prints what was checked; brk is the first break (of the ledger or
// against the kept head), nil when all is well.
func report(rep ledger.VerifyReport, kept *ledger.Head, brk *ledger.Break, asJSON bool, stdout io.Writer) {
	if asJSON {
		out := map[string]any{"ok": brk == nil, "events": rep.Events, "snapshots": rep.Snapshots, "primitive_revisions": rep.Primitives}
		if rep.Broken == nil {
			out["head"] = rep.Head
		}
		if kept != nil {
			out["kept_head"] = map[string]any{"seq": kept.Seq, "hash": kept.Hash, "held": rep.Broken == nil && brk == nil}
		}
		if brk != nil {
			out["broken"] = map[string]any{"event": brk.Seq, "table": brk.Table, "row_seq": brk.RowSeq, "what": brk.What, "message": brk.Error()}
		}
		enc := json.NewEncoder(termtext.JSONWriter(stdout))
		enc.SetIndent("", "  ")
		enc.Encode(out) //nolint:errcheck // stdout gone: nothing left to tell
		return
	}
	status := "ok"
	if brk != nil {
		status = "BROKEN"
	}
	fmt.Fprintf(stdout, "%s: checked %s (%s, %s)", status, plural.Count(rep.Events, "event", "events"),
		plural.Count(rep.Snapshots, "snapshot", "snapshots"), plural.Count(rep.Primitives, "primitive revision", "primitive revisions"))
	if rep.Broken == nil {
		fmt.Fprintf(stdout, ", head %s", rep.Head)
	}
	if kept != nil && brk == nil {
		fmt.Fprintf(stdout, "; holds the kept head %s", kept)
	}
	fmt.Fprintln(stdout)
}
