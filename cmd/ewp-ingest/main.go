// Command ewp-ingest loads EvidenceViews into an EWP ledger and verifies
// ledgers. Run `ewp-ingest --help` for usage; the logic lives in package
// ingest, this file only parses flags and wires things together.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/release"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

func main() {
	release.AnswerVersion("ewp-ingest")
	ingest.LimitMemory()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type config struct {
	db          string
	attest      bool
	evaluatedAt string
	partial     bool
	strict      bool
	quiet       bool
	json        bool
	axes        int
	limits      warrant.Limits
	files       []string
}

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ewp-ingest: internal error: %s\nThis is a bug; please report it with the command line and input.\n", termtext.Escape(fmt.Sprint(r)))
			code = ingest.ExitInternal
		}
	}()
	if len(args) > 0 {
		switch args[0] {
		case "verify":
			return runVerify(ctx, args[1:], stdout, stderr)
		case "init":
			return runInit(ctx, args[1:], stdout, stderr)
		case "copy":
			return runCopy(ctx, args[1:], stdout, stderr)
		}
	}
	cfg, code := parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	inputs, err := checkInputs(cfg.files)
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitUsage
	}
	created := newLedgerFile(cfg.db)
	l, err := store.Open(ctx, cfg.db, store.Options{Create: true})
	if err != nil {
		fmt.Fprintf(stderr, "ewp-ingest: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	code = load(ctx, l, cfg, inputs, stdin, stdout, stderr)
	empty := created && isEmpty(ctx, l)
	l.Close()
	switch {
	case empty:
		dropLedger(cfg.db, stderr)
	case created && !cfg.quiet && !cfg.json:
		fmt.Fprintf(stderr, "ewp-ingest: created the ledger %s\n", termtext.Escape(absPath(cfg.db)))
	}
	return code
}

// newLedgerFile reports whether db names an SQLite file that does not
// exist yet, which loading would create.
func newLedgerFile(db string) bool {
	if store.IsPostgres(db) {
		return false
	}
	_, err := os.Lstat(db)
	return errors.Is(err, fs.ErrNotExist)
}

// isEmpty reports whether the ledger's chain holds nothing.
func isEmpty(ctx context.Context, l store.Ledger) bool {
	h, err := l.Head(ctx)
	return err == nil && h.Seq == 0
}

// dropLedger removes a ledger file this run created and stored nothing
// in: a mistyped --db must not leave a new, empty ledger behind for a
// server to open later as if it were the real one. (Another process
// that began loading into the same new file at the same moment would
// lose it; creating a ledger on purpose is what init is for.)
func dropLedger(db string, stderr io.Writer) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix) //nolint:errcheck // what is left is named below
	}
	msg := "nothing was stored, so the new ledger %s was not kept (check --db; `ewp-ingest init --db PATH` makes a new ledger on purpose)\n"
	if _, err := os.Stat(db); err == nil {
		msg = "nothing was stored in the new ledger %s, and it could not be removed\n"
	}
	fmt.Fprintf(stderr, "ewp-ingest: "+msg, termtext.Escape(absPath(db)))
}

// absPath is path made absolute for a message, or path when it cannot be;
// a database connection string taken for a file name is shown redacted
// (its password never printed) and as given.
func absPath(path string) string {
	if shown := pgurl.Redact(path); shown != path {
		return shown
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// parse reads flags; code >= 0 means "exit now with code".
func parse(args []string, stdout, stderr io.Writer) (config, int) {
	var cfg config
	fs := flag.NewFlagSet("ewp-ingest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.db, "db", "", "")
	fs.BoolVar(&cfg.attest, "attest-trusted-origins", false, "")
	fs.StringVar(&cfg.evaluatedAt, "evaluated-at", "", "")
	fs.BoolVar(&cfg.partial, "partial", false, "")
	fs.BoolVar(&cfg.strict, "strict", false, "")
	fs.BoolVar(&cfg.quiet, "quiet", false, "")
	fs.BoolVar(&cfg.json, "json", false, "")
	fs.IntVar(&cfg.axes, "axes", 20, "")
	d := warrant.DefaultLimits
	fs.IntVar(&cfg.limits.MaxViewBytes, "max-view-bytes", d.MaxViewBytes, "")
	fs.IntVar(&cfg.limits.MaxRecords, "max-records", d.MaxRecords, "")
	fs.IntVar(&cfg.limits.MaxSubjects, "max-subjects", d.MaxSubjects, "")
	fs.IntVar(&cfg.limits.MaxStringBytes, "max-string-bytes", d.MaxStringBytes, "")
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return cfg, ingest.ExitOK
	}
	if err != nil {
		return cfg, usageError(stderr, err.Error())
	}
	cfg.files = files
	return cfg, validate(&cfg, stderr)
}

// parseInterspersed lets flags follow the files (`ewp-ingest a.json --quiet`),
// which is how people type; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(files, rest...), nil
		}
		files, args = append(files, rest[0]), rest[1:]
	}
}

func validate(cfg *config, stderr io.Writer) int {
	switch {
	case cfg.db == "":
		return usageError(stderr, "--db PATH is required (the ledger file, created if missing, or a postgres:// URL)")
	case len(cfg.files) == 0:
		return usageError(stderr, "no input: name one or more FILEs, or - for standard input")
	case cfg.axes < 0:
		return usageError(stderr, "--axes must be 0 or more")
	case cfg.limits.MaxViewBytes <= 0 || cfg.limits.MaxRecords <= 0 || cfg.limits.MaxSubjects <= 0 || cfg.limits.MaxStringBytes <= 0:
		return usageError(stderr, "--max-view-bytes, --max-records, --max-subjects and --max-string-bytes must be positive")
	}
	if cfg.evaluatedAt == "" {
		cfg.evaluatedAt = time.Now().UTC().Format(time.RFC3339)
	} else if _, ok := warrant.ParseInstant(cfg.evaluatedAt); !ok {
		return usageError(stderr, fmt.Sprintf("--evaluated-at %q is not a parseable instant (try 2026-09-21T12:00:00Z)", cfg.evaluatedAt))
	}
	return -1
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "ewp-ingest: %s\nRun 'ewp-ingest --help' for usage and examples.\n", msg)
	return ingest.ExitUsage
}

// checkInputs refuses missing files before anything is written, so a typo
// in the third name does not leave the first two loaded.
func checkInputs(files []string) ([]string, error) {
	stdin := 0
	for _, f := range files {
		if f == "-" {
			stdin++
			continue
		}
		if st, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("cannot read input %s: %v", f, err)
		} else if st.IsDir() {
			return nil, fmt.Errorf("input %s is a directory; name the files (e.g. %s/*.json)", f, strings.TrimSuffix(f, "/"))
		}
	}
	if stdin > 1 {
		return nil, errors.New("- (standard input) may be named only once")
	}
	return files, nil
}

func load(ctx context.Context, l store.Ledger, cfg config, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	bar := newProgress(stderr)
	ld := &ingest.Loader{L: l, Opt: ingest.Options{
		AttestTrustedOrigins: cfg.attest, Partial: cfg.partial, Strict: cfg.strict, Limits: cfg.limits, Graph: graphLoader, Progress: bar.update,
	}}
	if !cfg.json { // a stream's refusals are told at once, not when it ends
		ld.Opt.OnRefusal = func(r ingest.Refusal) { fmt.Fprintln(stderr, termtext.Escape(r.String())) }
		ld.Opt.OnWarning = func(r ingest.Refusal) { fmt.Fprintln(stderr, termtext.Escape(r.WarningString())) }
	}
	rep := ingest.Report{DB: pgurl.Redact(cfg.db)} // a URL's password never reaches the report
	for _, name := range files {
		fr, err := loadOne(ctx, ld, name, stdin)
		bar.clear()
		if err != nil {
			fmt.Fprintf(stderr, "ewp-ingest: %s: %s\n", termtext.Escape(name), termtext.Escape(err.Error()))
			return ingest.ExitLedger
		}
		rep.Add(fr)
	}
	if err := rep.SetHead(ctx, l); err != nil {
		fmt.Fprintf(stderr, "ewp-ingest: reading the chain head: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	if err := rep.Evaluate(ctx, l, cfg.evaluatedAt, cfg.axes); err != nil {
		fmt.Fprintf(stderr, "ewp-ingest: reading back the warrants: %s\n", termtext.Escape(err.Error()))
		return ingest.ExitLedger
	}
	write(&rep, cfg, stdout, stderr)
	return rep.ExitCode()
}

// loadOne loads one named input. Standard input and anything else that
// is not a regular file (a pipe, a FIFO, a device) is a stream, committed
// in batches as views arrive; a regular file is one transaction.
func loadOne(ctx context.Context, ld *ingest.Loader, name string, stdin io.Reader) (ingest.FileReport, error) {
	if name == "-" {
		return ld.Load(ctx, ingest.Input{Name: "<stdin>", R: stdin, Stream: !isRegular(stdin)})
	}
	f, err := os.Open(name)
	if err != nil {
		return ingest.FileReport{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ingest.FileReport{}, err
	}
	regular := st.Mode().IsRegular()
	in := ingest.Input{Name: name, R: f, Stream: !regular}
	if regular {
		in.Size = st.Size()
	}
	return ld.Load(ctx, in)
}

// isRegular reports whether r is a regular file (standard input
// redirected from one): such an input is loaded whole or not at all.
func isRegular(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

func write(rep *ingest.Report, cfg config, stdout, stderr io.Writer) {
	if cfg.json {
		enc := json.NewEncoder(termtext.JSONWriter(stdout))
		enc.SetIndent("", "  ")
		enc.Encode(rep) //nolint:errcheck // stdout gone: nothing left to tell
		return
	}
	rep.WriteWarnings(stderr, true)
	rep.WriteRefusals(stderr, true)
	if !cfg.quiet {
		rep.WriteText(stdout)
	}
}

// graphLoader loads concept-graph documents (the grounding guard's graph)
// into the same ledger, whole or not at all.
var graphLoader ingest.GraphLoader = graphstore.LoadDocument
