package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
)

// Every ingest reports the chain head after it, in the text (with the
// verify command to keep) and in --json, refused or not.
func TestEveryIngestReportsTheChainHead(t *testing.T) {
	eachStore(t, testEveryIngestReportsTheChainHead)
}

func testEveryIngestReportsTheChainHead(t *testing.T, kind string) {
	dir := t.TempDir()
	db := freshDB(t, kind)
	two := writeFile(t, dir, "two.jsonl", strings.ReplaceAll(view("P-1", "v1", "extract"), "\n", "")+"\n"+strings.ReplaceAll(view("P-2", "v1", "extract"), "\n", "")+"\n")
	bad := writeFile(t, dir, "bad.json", `{"proposition_id": 3}`)
	head := func() ledger.Head {
		l, err := openReader(db)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		h, err := l.Head(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	_, out, _ := runCLI(t, "", "--db", db, two)
	h := head()
	if h.Seq != 2 || !strings.Contains(out, "chain head "+h.String()+"\n") || !strings.Contains(out, "ewp-ingest verify --db "+shellWord(db)+" --head "+h.String()) {
		t.Fatalf("head %s; text report:\n%s", h, out)
	}

	for _, input := range []string{two, bad} { // unchanged, and refused: the head is still reported
		_, out, _ = runCLI(t, "", "--db", db, "--json", input)
		var rep struct {
			Head *struct {
				Seq  int64  `json:"seq"`
				Hash string `json:"hash"`
			} `json:"head"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Head == nil || rep.Head.Seq != h.Seq || rep.Head.Hash != h.Hash {
			t.Fatalf("%s: --json head %+v, want %s (%v)\n%s", input, rep.Head, h, err, out)
		}
	}
}

// shellWord is db as the report writes it for a shell: a PostgreSQL URL
// (with ? and &) in single quotes, a plain path as it is.
func shellWord(db string) string {
	if strings.ContainsAny(db, "?&") {
		return "'" + db + "'"
	}
	return db
}
