package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/ledger"
)

// runVerify is `ewp-ingest verify --db PATH [--json]`. It opens the ledger
// read-only, so verifying can never create or change a file.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ewp-ingest verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := fs.String("db", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return ingest.ExitOK
	} else if err != nil {
		return usageError(stderr, "verify: "+err.Error())
	}
	if *db == "" || fs.NArg() > 0 {
		return usageError(stderr, "usage: ewp-ingest verify --db PATH [--json]")
	}
	l, err := ledger.Open(*db, ledger.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest verify: %v\n", err)
		return ingest.ExitLedger
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	var brk *ledger.Break
	if err != nil && !errors.As(err, &brk) {
		fmt.Fprintf(stderr, "ewp-ingest verify: %v\n", err)
		return ingest.ExitLedger
	}
	report(rep, *asJSON, stdout)
	if brk != nil {
		if !*asJSON {
			fmt.Fprintf(stderr, "ewp-ingest verify: %v\n", brk)
		}
		return ingest.ExitBroken
	}
	return ingest.ExitOK
}

func report(rep ledger.VerifyReport, asJSON bool, stdout io.Writer) {
	if asJSON {
		out := map[string]any{"ok": rep.OK(), "events": rep.Events, "snapshots": rep.Snapshots, "primitive_revisions": rep.Primitives}
		if b := rep.Broken; b != nil {
			out["broken"] = map[string]any{"event": b.Seq, "table": b.Table, "row_seq": b.RowSeq, "what": b.What, "message": b.Error()}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out) //nolint:errcheck // stdout gone: nothing left to tell
		return
	}
	status := "ok"
	if !rep.OK() {
		status = "BROKEN"
	}
	fmt.Fprintf(stdout, "%s: checked %d events (%d snapshots, %d primitive revisions)\n", status, rep.Events, rep.Snapshots, rep.Primitives)
}
