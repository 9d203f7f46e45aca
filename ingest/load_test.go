package ingest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

func line(prop, view, content string) string {
	return `{"proposition_id": "` + prop + `", "view_id": "` + view + `", "evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "` + content +
		`", "observed_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "extract", "origin_locator": "x", "snapshot_id": "s1", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}}]}` + "\n"
}

// A view the ledger refuses (§9) inside a file: the whole file is refused,
// or with --partial only that view, and the refusal names its line.
func TestLedgerRefusalInsideAFile(t *testing.T) { eachStore(t, testLedgerRefusalInsideAFile) }

func testLedgerRefusalInsideAFile(t *testing.T, k storeKind) {
	data := []byte(line("P-1", "v1", "a") + line("P-2", "v1", "a") + line("P-1", "v2", "changed") + line("P-3", "v1", "a"))
	for _, partial := range []bool{false, true} {
		l, _ := freshLedger(t, k)
		rep, err := (&Loader{L: l, Opt: Options{Partial: partial}}).LoadFile(context.Background(), "f.jsonl", data)
		if err != nil || len(rep.Refused) != 1 {
			t.Fatalf("partial=%v: %+v %v", partial, rep, err)
		}
		r := rep.Refused[0]
		if r.Code != warrant.CodeImmutableRecord || r.Where != "line 3" || r.Field != "evidence[0]" {
			t.Errorf("partial=%v: refusal %s", partial, r)
		}
		if want := map[bool]int{false: 0, true: 3}[partial]; rep.Stored != want || rep.Written != partial {
			t.Errorf("partial=%v: stored %d (written %v), want %d", partial, rep.Stored, rep.Written, want)
		}
	}
}

// Without --partial, every invalid view of a file is reported, not only
// the one that stopped the load.
func TestAllRefusalsReported(t *testing.T) { eachStore(t, testAllRefusalsReported) }

func testAllRefusalsReported(t *testing.T, k storeKind) {
	bad := strings.Replace(line("P-x", "v1", "a"), `"supports"`, `"maybe"`, 1)
	var b strings.Builder
	for i := range 600 {
		if i%100 == 7 {
			b.WriteString(bad)
		} else {
			b.WriteString(line("P-"+strconv.Itoa(i), "v1", "a"))
		}
	}
	l, _ := freshLedger(t, k)
	rep, err := (&Loader{L: l}).LoadFile(context.Background(), "f.jsonl", []byte(b.String()))
	if err != nil || rep.Written || len(rep.Refused) != 6 || rep.Refused[0].Where != "line 8" || rep.Refused[5].Where != "line 508" {
		t.Fatalf("%d refusals, written %v, first %v, err %v", len(rep.Refused), rep.Written, rep.Refused, err)
	}
}

// A list broken off after two views: with --partial the two are stored
// and the break is reported; without, nothing is.
func TestBrokenListKeepsWhatCameBefore(t *testing.T) { eachStore(t, testBrokenListKeepsWhatCameBefore) }

func testBrokenListKeepsWhatCameBefore(t *testing.T, k storeKind) {
	data := "[" + strings.TrimSpace(line("P-1", "v1", "a")) + ",\n" + strings.TrimSpace(line("P-2", "v1", "a")) + ",\n oops"
	for _, partial := range []bool{false, true} {
		l, _ := freshLedger(t, k)
		rep, err := (&Loader{L: l, Opt: Options{Partial: partial}}).LoadFile(context.Background(), "f.json", []byte(data))
		want := map[bool]int{false: 0, true: 2}[partial]
		if err != nil || rep.Stored != want || len(rep.Refused) != 1 || !strings.Contains(rep.Refused[0].Rule, "[2]: line 3, column 2") || rep.Refused[0].Line != 3 {
			t.Errorf("partial=%v: stored %d, want %d; refused %v; %v", partial, rep.Stored, want, rep.Refused, err)
		}
	}
}
