// Command ewp-conformance runs an EWP implementer pack against this kernel
// and serves the JSON Lines differential interface.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ewp-go/ewp/conformance"
)

const usage = `ewp-conformance — prove the EWP kernel against a pack, or evaluate JSON Lines.

Usage:
  ewp-conformance [--pack DIR] [--json]
      Run every fixture, invalid view and golden of a pack laid out like the
      reference's implementer pack (fixtures/, expected/, invalid/, goldens/).
      DIR defaults to this project's own pack, ./fixtures/pack.
      Exit status: 0 CONFORMANT, 1 NONCONFORMANT, 2 usage or unreadable pack.

  ewp-conformance eval < docs.jsonl > verdicts.jsonl
      Read one fixture-format document per line (an EvidenceView plus
      "evaluated_at", optionally "policy_id"/"policy_version") and write
      exactly one JSON line per input line, in order: the full WarrantView,
      or {"refused": true, "code": "...", "error": "..."}. A line that is not
      JSON is refused, never a crash.

  ewp-conformance corpus FILE.jsonl[.gz]
      Run a differential corpus (lines of {"id","note","doc","expect"}, as in
      ../shared/ewp-differential/public.jsonl.gz) through eval and print
      "parity N/M", view_id and lineage-count agreement, and how many whole
      WarrantViews equal the reference's expect.warrant_view in every field,
      with a count per differing field and its first cases. Exit 1 on any
      difference.

Examples:
  ewp-conformance --pack ../shared/ewp-pack
  zcat corpus.jsonl.gz | jq -c .doc | ewp-conformance eval
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "corpus" {
		return runCorpus(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "eval" {
		if len(args) > 1 {
			fmt.Fprintln(stderr, "ewp-conformance eval takes no arguments; it reads standard input")
			return 2
		}
		if err := conformance.Eval(stdin, stdout); err != nil {
			fmt.Fprintln(stderr, "ewp-conformance eval:", err)
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("ewp-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	pack := fs.String("pack", "fixtures/pack", "pack directory")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	rep, err := conformance.RunPack(*pack)
	if err != nil {
		fmt.Fprintln(stderr, "ewp-conformance:", err)
		return 2
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return 2
	}
	if !rep.Conformant {
		return 1
	}
	return 0
}

func runCorpus(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: ewp-conformance corpus FILE.jsonl[.gz]")
		return 2
	}
	cases, err := conformance.LoadCorpus(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "ewp-conformance corpus:", err)
		return 2
	}
	p, err := conformance.CheckCorpus(cases)
	if err != nil {
		fmt.Fprintln(stderr, "ewp-conformance corpus:", err)
		return 2
	}
	p.WriteText(stdout)
	if !p.Agrees() {
		return 1
	}
	return 0
}
