package edgepolicy

import (
	"testing"
)

func TestValidateReportsEachReason(t *testing.T) {
	src := forbidPolicy("placed", "delete", "file", 3, "", "") +
		forbidPolicy("no_source", "shred", "file", 3, "", "") +
		forbidPolicy("no_target", "delete", "tape", 3, "", "") +
		forbidPolicy("wrong_depth", "delete", "file", 2, "", "") +
		forbidPolicy("both_missing", "shred", "tape", 1, "", "")
	g := newStubGraph("delete", "file").appliesTo("delete", "file", 3)
	got := mustLoad(t, src).Validate(g)
	want := []Orphan{
		{"no_source", "test.cedar:3:1", "shred", "file", 3, ReasonSourceNotFound},
		{"no_target", "test.cedar:5:1", "delete", "tape", 3, ReasonTargetNotFound},
		{"wrong_depth", "test.cedar:7:1", "delete", "file", 2, ReasonNoEdge},
		{"both_missing", "test.cedar:9:1", "shred", "tape", 1, ReasonSourceNotFound},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d orphans %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("orphan %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestValidateEdgeDirectionMatters(t *testing.T) {
	// file→delete exists, delete→file does not: a reversed edge is no edge.
	g := newStubGraph("delete", "file").appliesTo("file", "delete", 3)
	got := mustLoad(t, forbidPolicy("p", "delete", "file", 3, "", "")).Validate(g)
	if len(got) != 1 || got[0].Reason != ReasonNoEdge {
		t.Fatalf("orphans = %v, want one with %q", got, ReasonNoEdge)
	}
}

func TestValidateCleanSetHasNoOrphans(t *testing.T) {
	g := newStubGraph("delete", "write", "file").appliesTo("delete", "file", 3).appliesTo("write", "file", 3)
	src := forbidPolicy("a", "delete", "file", 3, "", "") + forbidPolicy("b", "WRITE", "File", 3, "", "")
	if got := mustLoad(t, src).Validate(g); len(got) != 0 {
		t.Fatalf("orphans = %v, want none", got)
	}
}

func TestFormatOrphans(t *testing.T) {
	orphans := []Orphan{
		{"no_source", "p.cedar:3:1", "shred", "file", 3, ReasonSourceNotFound},
		{"no_target", "p.cedar:9:1", "delete", "tape", 0, ReasonTargetNotFound},
		{"wrong_depth", "p.cedar:14:1", "delete", "file", 4, ReasonNoEdge},
	}
	want := "p.cedar:3:1 (no_source): shred->file @ D3 CONSTRAINTS [source primitive not found]\n" +
		"p.cedar:9:1 (no_target): delete->tape @ D0 EXISTENCE [target primitive not found]\n" +
		"p.cedar:14:1 (wrong_depth): delete->file @ D4 IMPLICATIONS [no APPLIES_TO edge at this source depth]"
	if got := FormatOrphans(orphans); got != want {
		t.Fatalf("FormatOrphans =\n%s\nwant\n%s", got, want)
	}
	if got := FormatOrphans(nil); got != "" {
		t.Fatalf("FormatOrphans(nil) = %q, want empty", got)
	}
}

func TestDepthLabel(t *testing.T) {
	want := []string{"D0 EXISTENCE", "D1 IDENTITY", "D2 CAPABILITIES", "D3 CONSTRAINTS", "D4 IMPLICATIONS"}
	for d, w := range want {
		if got := DepthLabel(d); got != w {
			t.Errorf("DepthLabel(%d) = %q, want %q", d, got, w)
		}
	}
	if got := DepthLabel(5); got != "D5" {
		t.Errorf("DepthLabel(5) = %q, want D5", got)
	}
}
