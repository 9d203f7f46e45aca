// Command ewp-conformance judges an EWP implementation — this project's
// kernel, a program speaking the eval JSON Lines protocol, or an MCP
// server — against an implementer pack and a differential corpus, and
// serves the eval protocol itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ewp-go/ewp/conformance"
	"github.com/ewp-go/ewp/release"
)

const usage = `ewp-conformance — judge an EWP implementation, or evaluate JSON Lines.

Usage:
  ewp-conformance [--target T] [--pack DIR] [--corpus FILE [--corpus-limit N]]
                  [--timeout DUR] [--json] [--junit FILE]
      Run every fixture (expected axes), invalid view (must be refused) and
      golden (every WarrantView field) of a pack laid out like the
      reference's implementer pack (fixtures/, expected/, invalid/,
      goldens/), and the cases of a differential corpus, against target T:

        kernel                this project's own evaluator (the default)
        eval:'COMMAND'        a program speaking the eval JSON Lines protocol
                              (conformance/PROTOCOL.md), started without a shell
        mcp-stdio:'COMMAND'   an EWP MCP server over stdio; "{tmp}" in COMMAND
                              becomes a fresh empty directory for each start
        mcp:URL               an EWP MCP server over Streamable HTTP; the ingest
                              token, if any, is read from EWP_INGEST_TOKEN

      An MCP server is asked through warrant_now or ewp_warrant_now (read from
      tools/list); where it has evidence_view_put and evidence_view_get and
      lets the runner write, every valid view is also stored, read back and
      evaluated from the store, so ingest and retrieval are judged too.

      Each case is PASS or one class: INGEST_LOSS, RETRIEVAL_LOSS,
      ADAPTER_MAP_LOSS, WARRANT_MISMATCH, REFUSAL_MISMATCH, CRASH, TIMEOUT
      (SKIPPED when the transport cannot carry it), with the field path and
      both values of every difference. EXPECTED_DIVERGENCE (strength,
      rationale_codes) is an observation, never a failure.

      --pack DIR        the pack (default ./fixtures/pack; "" for none)
      --corpus FILE     a differential corpus (.jsonl or .jsonl.gz)
      --corpus-limit N  only its first N cases (default all)
      --grounding FILE  a grounding pack's cases.json (graphs beside it), asked of
                        check_grounding: all of them of the kernel; of an MCP
                        server, those on the graph it holds, named with
                        --grounding-graph NAME (the others are SKIPPED)
      --timeout DUR     the most one call to the target may take (default 10s);
                        a target past it is stopped, reported TIMEOUT, and
                        started afresh for the next case
      --json            print the whole run as JSON instead of text
      --junit FILE      also write JUnit XML to FILE
      --version         print the protocol, policy and release lock

      Exit status: 0 CONFORMANT, 1 NONCONFORMANT (a target that cannot be
      started is NONCONFORMANT, every case CRASH), 2 usage error or an
      unreadable pack or corpus.

  ewp-conformance eval < docs.jsonl > verdicts.jsonl
      Speak the eval protocol: one fixture-format document per line in, one
      answer per line out, in order: the full WarrantView, or
      {"refused": true, "code": "...", "error": "..."}.

  ewp-conformance corpus FILE.jsonl[.gz]
      This kernel's parity with a differential corpus: "parity N/M", view_id
      and lineage-count agreement, and whole-WarrantView agreement with a count
      per differing field. Exit 1 on any difference.

Examples:
  ewp-conformance --pack ../shared/ewp-pack
  ewp-conformance --target eval:'python3 my_ewp.py' --junit report.xml
  ewp-conformance --target mcp-stdio:'ewp-mcp --db {tmp}/l.db --allow-ingest'
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if release.IsVersionFlag(args) {
		release.PrintVersion(stdout, "ewp-conformance")
		return 0
	}
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
	return runSuite(args, stdout, stderr)
}

type suiteFlags struct {
	target, pack, corpus, junit string
	grounding, groundingGraph   string
	corpusLimit                 int
	timeout                     time.Duration
	asJSON                      bool
}

func parseSuite(args []string, stderr io.Writer) (suiteFlags, error) {
	var f suiteFlags
	fs := flag.NewFlagSet("ewp-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&f.target, "target", "kernel", "")
	fs.StringVar(&f.pack, "pack", "fixtures/pack", "")
	fs.StringVar(&f.corpus, "corpus", "", "")
	fs.StringVar(&f.grounding, "grounding", "", "")
	fs.StringVar(&f.groundingGraph, "grounding-graph", "", "")
	fs.IntVar(&f.corpusLimit, "corpus-limit", 0, "")
	fs.DurationVar(&f.timeout, "timeout", conformance.DefaultTimeout, "")
	fs.BoolVar(&f.asJSON, "json", false, "")
	fs.StringVar(&f.junit, "junit", "", "")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	switch {
	case fs.NArg() > 0:
		return f, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	case f.timeout <= 0:
		return f, fmt.Errorf("--timeout %v: want a positive duration such as 10s", f.timeout)
	case f.corpusLimit < 0:
		return f, fmt.Errorf("--corpus-limit %d: want a positive number of cases (0 for all)", f.corpusLimit)
	case f.pack == "" && f.corpus == "" && f.grounding == "":
		return f, errors.New("nothing to run: give --pack DIR, --corpus FILE or --grounding FILE")
	case f.groundingGraph != "" && f.grounding == "":
		return f, errors.New("--grounding-graph names the graph an MCP server holds for --grounding FILE; give --grounding too")
	}
	return f, nil
}

func runSuite(args []string, stdout, stderr io.Writer) int {
	f, err := parseSuite(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if err.Error() != "" {
			fmt.Fprintln(stderr, "ewp-conformance:", err)
		}
		return 2
	}
	cases, sources, err := loadCases(f)
	if err != nil {
		fmt.Fprintln(stderr, "ewp-conformance:", err)
		return 2
	}
	target, err := conformance.ParseTarget(f.target, conformance.TargetOptions{
		IngestToken: os.Getenv("EWP_INGEST_TOKEN"), GroundingGraph: f.groundingGraph})
	if err != nil {
		fmt.Fprintln(stderr, "ewp-conformance:", err)
		return 2
	}
	defer target.Close()
	r := &conformance.Runner{Target: target, Timeout: f.timeout}
	result := r.RunCases(context.Background(), sources, cases)
	if err := writeRun(result, f, stdout); err != nil {
		fmt.Fprintln(stderr, "ewp-conformance:", err)
		return 2
	}
	if !result.Conformant {
		return 1
	}
	return 0
}

func loadCases(f suiteFlags) ([]conformance.Case, []string, error) {
	var cases []conformance.Case
	var sources []string
	if f.pack != "" {
		cs, err := conformance.LoadPack(f.pack)
		if err != nil {
			return nil, nil, err
		}
		cases, sources = append(cases, cs...), append(sources, "pack "+f.pack)
	}
	if f.corpus != "" {
		cs, err := conformance.CorpusCases(f.corpus, f.corpusLimit)
		if err != nil {
			return nil, nil, err
		}
		cases, sources = append(cases, cs...), append(sources, fmt.Sprintf("corpus %s (%d cases)", f.corpus, len(cs)))
	}
	if f.grounding != "" {
		cs, err := conformance.GroundingCases(f.grounding)
		if err != nil {
			return nil, nil, err
		}
		cases, sources = append(cases, cs...), append(sources, "grounding "+f.grounding)
	}
	return cases, sources, nil
}

func writeRun(result *conformance.Run, f suiteFlags, stdout io.Writer) error {
	if f.junit != "" {
		file, err := os.Create(f.junit)
		if err != nil {
			return err
		}
		if err := result.WriteJUnit(file); err != nil {
			file.Close()
			return err
		}
		if err := file.Close(); err != nil {
			return err
		}
	}
	if f.asJSON {
		return result.WriteJSON(stdout)
	}
	return result.WriteText(stdout)
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
