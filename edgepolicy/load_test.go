package edgepolicy

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadKeepsFileOrderAndAnnotations(t *testing.T) {
	src := forbidPolicy("b_first", "delete", "file", 3, `@confirm("Sure?") @cardinality("multiple")`, "") +
		forbidPolicy("a_second", "write", "file", 0, "", "")
	s := mustLoad(t, src)
	if got, want := s.IDs(), []string{"b_first", "a_second"}; !slices.Equal(got, want) {
		t.Fatalf("IDs = %v, want %v (file order)", got, want)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	p := s.policies[0]
	if p.source != "delete" || p.target != "file" || p.depth != 3 || p.confirm != "Sure?" || p.cardinality != "multiple" {
		t.Fatalf("first policy parsed as %+v", p)
	}
	if q := s.policies[1]; q.depth != 0 || q.confirm != "" || q.cardinality != "" {
		t.Fatalf("second policy parsed as %+v", q)
	}
	if p.position != "test.cedar:1:1" {
		t.Fatalf("position = %q, want test.cedar:1:1", p.position)
	}
}

func TestLoadEmptyFileIsAnEmptySet(t *testing.T) {
	s := mustLoad(t, "// no policies yet\n")
	if s.Len() != 0 {
		t.Fatalf("Len = %d, want 0", s.Len())
	}
	if v := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm"}); v != nil {
		t.Fatalf("empty set produced violations %v", v)
	}
}

func TestLoadRules(t *testing.T) {
	const ok = `@id("p") @source("delete") @target("file") @source_depth("3")`
	cases := []struct {
		name, src      string
		id, annotation string
		problem        string // substring
	}{
		{"permit", ok + ` permit (principal, action, resource);`, "p", "", "only forbid"},
		{"missing id", `@source("a") @target("b") @source_depth("1") forbid (principal, action, resource);`, "", "id", "missing"},
		{"missing source", `@id("p") @target("b") @source_depth("1") forbid (principal, action, resource);`, "p", "source", "missing"},
		{"missing target", `@id("p") @source("a") @source_depth("1") forbid (principal, action, resource);`, "p", "target", "missing"},
		{"missing depth", `@id("p") @source("a") @target("b") forbid (principal, action, resource);`, "p", "source_depth", "missing"},
		{"empty source", `@id("p") @source("") @target("b") @source_depth("1") forbid (principal, action, resource);`, "p", "source", "empty"},
		{"bare target", `@id("p") @source("a") @target @source_depth("1") forbid (principal, action, resource);`, "p", "target", "empty"},
		{"depth 5", strings.Replace(ok, `"3"`, `"5"`, 1) + ` forbid (principal, action, resource);`, "p", "source_depth", `got "5"`},
		{"depth -1", strings.Replace(ok, `"3"`, `"-1"`, 1) + ` forbid (principal, action, resource);`, "p", "source_depth", `got "-1"`},
		{"depth 03", strings.Replace(ok, `"3"`, `"03"`, 1) + ` forbid (principal, action, resource);`, "p", "source_depth", `got "03"`},
		{"depth word", strings.Replace(ok, `"3"`, `"three"`, 1) + ` forbid (principal, action, resource);`, "p", "source_depth", `got "three"`},
		{"cardinality", ok + ` @cardinality("many") forbid (principal, action, resource);`, "p", "cardinality", `got "many"`},
		{"cardinality case", ok + ` @cardinality("Single") forbid (principal, action, resource);`, "p", "cardinality", `got "Single"`},
		{"bare confirm", ok + ` @confirm forbid (principal, action, resource);`, "p", "confirm", "message"},
		{"blank confirm", ok + ` @confirm("  ") forbid (principal, action, resource);`, "p", "confirm", "message"},
		{"unknown annotation", ok + ` @confrim("x") forbid (principal, action, resource);`, "p", "confrim", "unknown annotation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("rules.cedar", []byte(c.src))
			errs := loadErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(errs), err)
			}
			e := errs[0]
			if e.PolicyID != c.id || e.Annotation != c.annotation || !strings.Contains(e.Problem, c.problem) {
				t.Fatalf("got %+v, want id %q annotation %q problem containing %q", e, c.id, c.annotation, c.problem)
			}
			if e.Position != "rules.cedar:1:1" {
				t.Fatalf("position = %q", e.Position)
			}
		})
	}
}

func TestLoadAcceptsEveryDepthAndBothCardinalities(t *testing.T) {
	var src strings.Builder
	for d := 0; d <= 4; d++ {
		src.WriteString(forbidPolicy("d"+string(rune('0'+d)), "a", "b", d, "", ""))
	}
	src.WriteString(forbidPolicy("single", "a", "b", 1, `@cardinality("single")`, ""))
	src.WriteString(forbidPolicy("multiple", "a", "b", 1, `@cardinality("multiple")`, ""))
	if s := mustLoad(t, src.String()); s.Len() != 7 {
		t.Fatalf("Len = %d, want 7", s.Len())
	}
}

func TestLoadDuplicateIDNamesTheFirstUse(t *testing.T) {
	src := forbidPolicy("dup", "a", "b", 1, "", "") + forbidPolicy("other", "a", "b", 1, "", "") +
		forbidPolicy("dup", "c", "d", 2, "", "")
	errs := loadErrors(t, loadErr(src))
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1", len(errs))
	}
	e := errs[0]
	if e.PolicyID != "dup" || e.Annotation != "id" || e.Position != "test.cedar:5:1" ||
		!strings.Contains(e.Problem, "duplicate id, first used at test.cedar:1:1") {
		t.Fatalf("got %+v", e)
	}
}

func TestLoadDuplicateIDReportedEvenWhenFirstUseIsInvalid(t *testing.T) {
	src := `@id("dup") permit (principal, action, resource);` + "\n" + forbidPolicy("dup", "a", "b", 1, "", "")
	errs := loadErrors(t, loadErr(src))
	var dup bool
	for _, e := range errs {
		dup = dup || (e.Annotation == "id" && strings.Contains(e.Problem, "duplicate"))
	}
	if !dup {
		t.Fatalf("no duplicate-id error among %v", errs)
	}
}

func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	src := `@id("x") @source_depth("7") @cardinality("all") permit (principal, action, resource);`
	errs := loadErrors(t, loadErr(src))
	var got []string
	for _, e := range errs {
		got = append(got, e.Annotation)
	}
	want := []string{"", "source", "target", "source_depth", "cardinality"}
	if !slices.Equal(got, want) {
		t.Fatalf("annotations at fault = %q, want %q", got, want)
	}
}

func TestLoadErrorMessageNamesPolicyAnnotationAndRule(t *testing.T) {
	err := loadErr(forbidPolicy("p1", "a", "b", 1, `@cardinality("both")`, ""))
	want := `policy "p1" at test.cedar:1:1: @cardinality: must be "single" or "multiple", got "both"`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	err = loadErr(`@source("a") @target("b") @source_depth("1") forbid (principal, action, resource);`)
	want = `policy at test.cedar:1:1: @id: missing required annotation`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func TestLoadSyntaxErrorNamesTheFile(t *testing.T) {
	_, err := Load("broken.cedar", []byte(`@id("p") forbid (principal, action resource);`))
	if err == nil || !strings.Contains(err.Error(), "broken.cedar") {
		t.Fatalf("error = %v, want a parse error naming broken.cedar", err)
	}
}

func loadErr(src string) error {
	_, err := Load("test.cedar", []byte(src))
	return err
}
