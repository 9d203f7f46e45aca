package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

func loadText(t *testing.T, name, data string) FileReport {
	t.Helper()
	var rep FileReport
	eachStore(t, func(t *testing.T, k storeKind) {
		l, _ := freshLedger(t, k)
		got, err := (&Loader{L: l}).LoadFile(context.Background(), name, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if k == sqliteStore {
			rep = got
		} else if g, w := jsonOf(t, got), jsonOf(t, rep); g != w {
			t.Errorf("%s: the PostgreSQL ledger's report differs from the SQLite one's:\n%s\n%s", name, g, w)
		}
	})
	return rep
}

const explainSource = `{"source_id": "s1", "lineage_id": "L1", "origin_type": "extract", "origin_locator": "l", "snapshot_id": "n", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}`

func TestRefusalListsEveryProblemOfTheView(t *testing.T) {
	bad := `{"proposition_id": "P", "subjects": "db-1",
		"evidence": [{"evidence_id": "e1", "polarity": "maybe", "content": "c", "observed_at": "2026-09-01T00:00:00Z", "source": ` + explainSource + `}],
		"checks": [{"check_id": "k1", "method": "m", "scope": "s", "observed_at": "2026-09-01T00:00:00Z", "source": ` + explainSource + `}]}`
	rep := loadText(t, "bad.json", bad)
	if len(rep.Refused) != 1 {
		t.Fatalf("refusals: %+v", rep.Refused)
	}
	r := rep.Refused[0]
	// The kernel's verdict is untouched: it stops at the first problem
	// in its own order.
	if r.Code != warrant.CodeInvalidView || r.Field != "subjects" || r.Pointer != "/subjects" {
		t.Fatalf("refusal: %+v", r)
	}
	want := []string{"/checks/0/result: is required", "/evidence/0/polarity: must be one of supports, opposes"}
	if len(r.More) != len(want) {
		t.Fatalf("more: %q", r.More)
	}
	for i, w := range want {
		if !strings.HasPrefix(r.More[i], w) {
			t.Errorf("more[%d] = %q, want %q...", i, r.More[i], w)
		}
	}
	if s := r.String(); !strings.Contains(s, "(the schema also finds: /checks/0/result") {
		t.Errorf("String() = %s", s)
	}
}

// The kernel names policy_id for any unknown policy identity; the schema
// can tell which of the two fields is wrong.
func TestPolicyRefusalPointsAtTheField(t *testing.T) {
	rep := loadText(t, "p.json", `{"proposition_id": "P", "evaluated_at": "2026-09-01T00:00:00Z", "policy_version": "v9"}`)
	r := rep.Refused[0]
	if r.Code != warrant.CodeUnknownPolicy || r.Field != "policy_id" || r.Pointer != "/policy_version" || len(r.More) != 0 {
		t.Fatalf("refusal: %+v", r)
	}
	if !strings.Contains(r.String(), "[at /policy_version]") {
		t.Errorf("String() = %s", r.String())
	}
}

func TestRulesBeyondTheSchemaKeepTheKernelsLocation(t *testing.T) {
	ev := `{"evidence_id": "e1", "polarity": "supports", "content": "c", "observed_at": "2026-09-01T00:00:00Z", "source": ` + explainSource + `}`
	lines := `{"proposition_id": "P", "evidence": [` + ev + `, ` + ev + `]}` + "\n" + `{"proposition_id": "Q", "evidence": [` + ev + `]}`
	rep := loadText(t, "dup.jsonl", lines)
	r := rep.Refused[0]
	if r.Field != "evidence[1].evidence_id" || r.Pointer != "/evidence/1/evidence_id" || len(r.More) != 0 || strings.Contains(r.String(), "[at") {
		t.Fatalf("refusal: %+v", r)
	}
}

func TestOnlyTheFirstRefusalsAreExplained(t *testing.T) {
	var b strings.Builder
	for range maxExplained + 20 {
		b.WriteString(`{"proposition_id": "P", "degraded": "yes", "subjects": "x"}` + "\n")
	}
	rep := loadText(t, "many.jsonl", b.String())
	if len(rep.Refused) != maxExplained+20 {
		t.Fatalf("%d refusals", len(rep.Refused))
	}
	for i, r := range rep.Refused {
		if explained := r.Pointer != ""; explained != (i < maxExplained) {
			t.Fatalf("refusal %d: explained=%v", i, explained)
		}
	}
}

// Over the corpus, an explanation never moves the refusal away from the
// kernel's location (except to the policy field at fault) and never
// changes the kernel's verdict.
func TestExplanationsAgreeWithKernelOnCorpus(t *testing.T) {
	var explained, more int
	eachCorpusDoc(t, func(id string, raw []byte) {
		_, err := DecodeItem(raw, true)
		var we *warrant.Error
		if !errors.As(err, &we) {
			return
		}
		r := Refusal{Code: we.Code, Field: we.Field, Rule: we.Rule}
		explain(&r, raw)
		kernel := fieldPointer(we.Field)
		ok := r.Pointer == kernel || strings.HasPrefix(r.Pointer, kernel+"/") ||
			(we.Code == warrant.CodeUnknownPolicy && (r.Pointer == "/policy_id" || r.Pointer == "/policy_version"))
		if !ok || r.Code != we.Code || r.Field != we.Field || r.Rule != we.Rule {
			t.Fatalf("%s: kernel %v, explained %+v", id, we, r)
		}
		explained++
		if len(r.More) > 0 {
			more++
		}
	})
	t.Logf("%d refused documents located; for %d the schema found further problems in the same view", explained, more)
}

// eachCorpusDoc calls fn with every document of the differential corpus.
func eachCorpusDoc(t *testing.T, fn func(id string, raw []byte)) {
	t.Helper()
	sharedtest.EachCorpusCase(t, func(_ int, c sharedtest.CorpusCase) { fn(c.ID, c.Doc) })
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
