package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

// learnGraph has one concept per learning situation:
//
//	os      D0–D3, full
//	file    D0, D1 (REQUIRES os @1): shallow
//	create  D0, D1, D3 (APPLIES_TO file @2): a hole at D2 gates its edge
//	read    D0–D2 (APPLIES_TO file @2 on D2)
//	lonely  D0, D1, no edges
const learnGraph = `{"graph": "learn", "primitives": [
 {"name": "os", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "os"}}, {"level": 2, "properties": {"d": "runs"}}, {"level": 3, "properties": {"d": "limits"}}]},
 {"name": "file", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "file"}, "relata": [{"type": "REQUIRES", "target": "os", "target_depth": 1}]}]},
 {"name": "create", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "make"}},
   {"level": 3, "properties": {"d": "only where allowed"}, "relata": [{"type": "APPLIES_TO", "target": "file", "target_depth": 2}]}]},
 {"name": "read", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "read"}},
   {"level": 2, "properties": {"d": "returns bytes"}, "relata": [{"type": "APPLIES_TO", "target": "file", "target_depth": 2}]}]},
 {"name": "lonely", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "alone"}}]}]}`

func props() obj { return obj{"description": "learned by the test"} }

func depthGap(name string, req, cur int, missing ...int) obj {
	return obj{"kind": "DEPTH", "primitive": name, "required_depth": req, "current_depth": cur, "missing_levels": missing}
}

func depths(levels ...int) obj {
	var nd []any
	for _, l := range levels {
		nd = append(nd, obj{"level": l, "properties": props()})
	}
	return obj{"kind": "DEPTH", "new_depths": nd}
}

func reach(src, dst string, typ, sd, td any) obj {
	return obj{"kind": "REACHABILITY", "source_name": src, "target_name": dst, "relation_type": typ,
		"source_depth_level": sd, "target_depth_level": td}
}

var ingestCtx = withRole(context.Background(), role{ingest: true, why: "test"})

// Every refusal of GROUNDING.md §4.2–§4.3 comes back as a tool error with
// its code and the spec's wording, and writes nothing.
func TestLearnGapRefusals(t *testing.T) {
	gl := newGuardLedger(t, []byte(learnGraph))
	c := dialInProcess(t, guardServer(t, gl, nil))
	existence := obj{"kind": "EXISTENCE", "primitive": "network"}
	relational := obj{"kind": "RELATIONAL", "source": "read", "target": "file", "required_depth": 2, "current_depth": 1, "missing_levels": []any{2}}
	reachGap := obj{"kind": "REACHABILITY", "primitive": "lonely"}
	cases := []struct {
		name      string
		gap, cand obj
		code      string
		says      string
	}{
		{"kind mismatch", depthGap("create", 3, 1, 2), obj{"kind": "EXISTENCE", "name": "create", "d1": obj{"level": 1, "properties": props()}},
			grounding.CodeCandidateInvalid, "Candidate kind 'EXISTENCE' does not match gap kind 'DEPTH'"},
		// Existence.
		{"existence without d1", existence, obj{"kind": "EXISTENCE", "name": "network"}, grounding.CodeCandidateInvalid, "missing D1 (identity)"},
		{"existence other name", existence, obj{"kind": "EXISTENCE", "name": "internet", "d1": obj{"level": 1, "properties": props()}},
			grounding.CodeCandidateInvalid, "does not match the gapped concept 'network'"},
		{"existence d1 at level 2", existence, obj{"kind": "EXISTENCE", "name": "network", "d1": obj{"level": 2, "properties": props()}},
			grounding.CodeCandidateInvalid, "must be at level D1 IDENTITY"},
		{"existence empty d1", existence, obj{"kind": "EXISTENCE", "name": "network", "d1": obj{"level": 1, "properties": obj{}}},
			grounding.CodeCandidateInvalid, "no properties"},
		{"existence replay", obj{"kind": "EXISTENCE", "primitive": "File"}, obj{"kind": "EXISTENCE", "name": "File", "d1": obj{"level": 1, "properties": props()}},
			grounding.CodeGapResolved, "already exists"},
		// Depth.
		{"no new depths", depthGap("create", 3, 1, 2), obj{"kind": "DEPTH", "new_depths": []any{}}, grounding.CodeCandidateInvalid, "has no new depths"},
		{"primitive not found", depthGap("ghost", 2, 1, 2), depths(2), grounding.CodeCandidateInvalid, "Primitive 'ghost' not found"},
		{"stale depth gap", depthGap("os", 2, 1, 2), depths(2), grounding.CodeGapResolved, "already resolved"},
		{"duplicate levels", depthGap("create", 3, 1, 2), depths(2, 2), grounding.CodeCandidateInvalid, "duplicate depth levels [2]"},
		{"above required", depthGap("file", 2, 1, 2), depths(2, 3), grounding.CodeCandidateInvalid, "may not escalate scope"},
		{"already present", depthGap("create", 3, 1, 2), depths(1, 2), grounding.CodeCandidateInvalid, "already grounded; fill only the missing levels [2]"},
		{"not contiguous", depthGap("file", 3, 1, 2, 3), depths(3), grounding.CodeCandidateInvalid, "contiguous chain through D3 CONSTRAINTS; fill the holes: [2]"},
		// Relational (levels are the target's).
		{"relational no depths", relational, obj{"kind": "RELATIONAL", "new_depths": []any{}}, grounding.CodeCandidateInvalid, "RelationalCandidate has no new depths"},
		{"relational target not found", obj{"kind": "RELATIONAL", "source": "read", "target": "ghost", "required_depth": 2, "current_depth": 1},
			obj{"kind": "RELATIONAL", "new_depths": []any{obj{"level": 2, "properties": props()}}}, grounding.CodeCandidateInvalid, "Primitive 'ghost' not found"},
		{"stale relational gap", obj{"kind": "RELATIONAL", "source": "read", "target": "os", "required_depth": 2, "current_depth": 1},
			obj{"kind": "RELATIONAL", "new_depths": []any{obj{"level": 2, "properties": props()}}}, grounding.CodeGapResolved, "already resolved"},
		// Reachability: the candidate's own checks (§4.2 and §4.3 step 1).
		{"reachability missing names", reachGap, obj{"kind": "REACHABILITY"}, grounding.CodeCandidateInvalid, "missing source_name or target_name"},
		{"reachability missing type", reachGap, reach("lonely", "os", nil, 1, 1), grounding.CodeCandidateInvalid, "missing relation_type"},
		{"reachability missing levels", reachGap, reach("lonely", "os", "APPLIES_TO", nil, 1), grounding.CodeCandidateInvalid, "missing source_depth_level or target_depth_level"},
		{"reachability off the gap", reachGap, reach("read", "os", "APPLIES_TO", 1, 1), grounding.CodeCandidateInvalid, "must reference the gapped primitive 'lonely'"},
		// Reachability: resolution and depth (§4.2 path, §4.3 steps 2–3).
		{"reachability unknown name", reachGap, reach("lonely", "ghost", "APPLIES_TO", 1, 1), grounding.CodeCandidateInvalid, "Cannot resolve 'ghost' to a primitive ID"},
		{"reachability source too shallow", reachGap, reach("lonely", "os", "APPLIES_TO", 2, 1), grounding.CodeCandidateInvalid,
			`Fill the DepthGap first. Prerequisite gaps (fill each through gap_template and learn_gap): [{"kind":"DEPTH","primitive":"lonely","required_depth":2,"current_depth":1,"missing_levels":[2]`},
		{"reachability target too shallow", reachGap, reach("lonely", "file", "APPLIES_TO", 1, 3), grounding.CodeCandidateInvalid, "Target 'file' requires D3 CONSTRAINTS"},
		{"reachability cycle", obj{"kind": "REACHABILITY", "primitive": "os"}, reach("os", "file", "DEPENDS_ON", 1, 1), grounding.CodeInvalidGraph, "transitive cycle"},
		{"reachability self reference", reachGap, reach("lonely", "lonely", "REQUIRES", 1, 1), grounding.CodeInvalidGraph, "self_reference"},
	}
	before := graphVersion(t, gl)
	for _, tc := range cases {
		o := callCtx(ingestCtx, t, c, "learn_gap", obj{"gap": tc.gap, "candidate": tc.cand})
		if o.code != tc.code || !strings.Contains(o.msg, tc.says) {
			t.Errorf("%s: got %s %q, want %s saying %q", tc.name, o.code, o.msg, tc.code, tc.says)
		}
	}
	if after := graphVersion(t, gl); after != before {
		t.Fatalf("refused fills wrote to the ledger: graph version %d → %d", before, after)
	}
}

func graphVersion(t testing.TB, gl *guardLedger) int64 {
	t.Helper()
	v, err := gl.l.GraphVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Malformed gaps and candidates are refused before the graph is consulted,
// naming the argument at fault.
func TestGapAndCandidateDecoding(t *testing.T) {
	c := dialInProcess(t, guardServer(t, newGuardLedger(t, []byte(learnGraph)), nil))
	okCand := depths(2)
	cases := []struct {
		tool  string
		args  obj
		names string
	}{
		{"gap_template", obj{}, "gap"},
		{"gap_template", obj{"gap": obj{"kind": "WIDTH", "primitive": "x"}}, "gap.kind"},
		{"gap_template", obj{"gap": obj{"primitive": "x"}}, "gap.kind"},
		{"gap_template", obj{"gap": obj{"kind": "DEPTH", "primitive": "x"}}, "gap.required_depth"},
		{"gap_template", obj{"gap": obj{"kind": "DEPTH", "primitive": "x", "required_depth": 5}}, "gap.required_depth"},
		{"gap_template", obj{"gap": obj{"kind": "EXISTENCE", "primitive": "x", "source": "y"}}, "gap.source"},
		{"gap_template", obj{"gap": obj{"kind": "RELATIONAL", "source": "x", "required_depth": 2}}, "gap.target"},
		{"gap_template", obj{"gap": obj{"kind": "DEPTH", "primitive": "x", "required_depth": 2, "missing_levels": []any{2, "3"}}}, "gap.missing_levels[1]"},
		{"learn_gap", obj{"gap": depthGap("create", 3, 1, 2)}, "candidate"},
		{"learn_gap", obj{"gap": depthGap("create", 3, 1, 2), "candidate": obj{"kind": "DEPTH", "name": "x"}}, "candidate.name"},
		{"learn_gap", obj{"gap": depthGap("create", 3, 1, 2), "candidate": obj{"kind": "DEPTH", "new_depths": []any{obj{"level": 2, "relata": []any{}}}}}, "candidate.new_depths[0].relata"},
		{"learn_gap", obj{"gap": depthGap("create", 3, 1, 2), "candidate": obj{"kind": "DEPTH", "new_depths": []any{obj{"properties": props()}}}}, "candidate.new_depths[0].level"},
		{"learn_gap", obj{"gap": depthGap("create", 3, 1, 2), "candidate": obj{"kind": "DEPTH", "new_depths": []any{obj{"level": 2, "properties": "x"}}}}, "candidate.new_depths[0].properties"},
		{"learn_gap", obj{"gap": obj{"kind": "REACHABILITY", "primitive": "lonely"}, "candidate": reach("lonely", "os", "CAUSES", 1, 1)}, "candidate.relation_type"},
		{"learn_gap", obj{"gap": "DEPTH", "candidate": okCand}, "gap"},
	}
	for _, tc := range cases {
		msg := mustRefuse(t, callCtx(ingestCtx, t, c, tc.tool, tc.args), CodeInvalidArgument)
		if !strings.Contains(msg, tc.names) {
			t.Errorf("%s %v: message does not name %s: %s", tc.tool, tc.args, tc.names, msg)
		}
	}
}

// learn_gap writes, so it needs the ingest role over every transport;
// check_grounding and gap_template are reads.
func TestLearnGapNeedsIngestRole(t *testing.T) {
	args := obj{"gap": obj{"kind": "EXISTENCE", "primitive": "network"},
		"candidate": obj{"kind": "EXISTENCE", "name": "network", "d1": obj{"level": 1, "properties": props()}}}
	for _, d := range dialers {
		t.Run(d.name, func(t *testing.T) {
			gl := newGuardLedger(t, []byte(learnGraph))
			c := d.dial(t, guardServer(t, gl, nil), false)
			mustRefuse(t, call(t, c, "learn_gap", args), warrant.CodeIngestRole)
			mustOK(t, call(t, c, "gap_template", obj{"gap": args["gap"]}))
			mustOK(t, call(t, c, "check_grounding", obj{"concepts": []any{"network"}}))
			if v := graphVersion(t, gl); v != 5 {
				t.Fatalf("graph version %d after a refused write", v)
			}
			out := mustOK(t, call(t, d.dial(t, guardServer(t, gl, nil), true), "learn_gap", args))
			if out["provenance"] != "learned" {
				t.Fatalf("%v", out)
			}
		})
	}
}

// The full loop an agent runs: check_grounding, then for each gap
// gap_template, fill, learn_gap; check again until grounded. It covers
// DEPTH, RELATIONAL, EXISTENCE and REACHABILITY fills, over HTTP with the
// ingest token.
func TestLearningLoop(t *testing.T) {
	gl := newGuardLedger(t, []byte(learnGraph))
	c := dialers[0].dial(t, guardServer(t, gl, nil), true)
	for _, query := range [][]any{{"create", "file"}, {"network", "file"}} {
		var kinds []string
		for round := 0; ; round++ {
			out := mustOK(t, call(t, c, "check_grounding", obj{"concepts": query}))
			if out["grounded"] == true {
				break
			}
			if round == 6 {
				t.Fatalf("%v: still not grounded after %d rounds: %v", query, round, out["gaps"])
			}
			// One gap per round, then re-check: a fill can close or change
			// the other gaps (a filled depth makes a gated edge visible).
			gap := out["gaps"].([]any)[0].(obj)
			kinds = append(kinds, gap["kind"].(string))
			tmpl := mustOK(t, call(t, c, "gap_template", obj{"gap": gap}))
			cand := fill(tmpl["candidate"].(obj), gap, query)
			learned := mustOK(t, call(t, c, "learn_gap", obj{"gap": gap, "candidate": cand}))
			if learned["provenance"] != "learned" || len(learned["learned"].([]any)) != 1 {
				t.Fatalf("learn_gap: %v", learned)
			}
		}
		t.Logf("%v grounded after filling %v", query, kinds)
	}
	checkLearnedProvenance(t, gl, "network")
}

// fill completes a template the way an agent would: properties for every
// proposed depth; for REACHABILITY, an APPLIES_TO edge from the gapped
// concept to another concept of the query, at D1 on both ends.
func fill(cand, gap obj, query []any) obj {
	switch cand["kind"] {
	case "EXISTENCE":
		cand["d1"].(obj)["properties"] = props()
	case "DEPTH", "RELATIONAL":
		for _, d := range cand["new_depths"].([]any) {
			d.(obj)["properties"] = props()
		}
	case "REACHABILITY":
		other := query[0]
		if other == gap["primitive"] {
			other = query[1]
		}
		cand["source_name"], cand["target_name"], cand["relation_type"] = gap["primitive"], other, "APPLIES_TO"
		cand["source_depth_level"], cand["target_depth_level"] = 1, 1
	}
	return cand
}

func checkLearnedProvenance(t *testing.T, gl *guardLedger, name string) {
	t.Helper()
	g, _, err := gl.store.Graph(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, ok := g.ByName(name)
	if !ok || p.Provenance.Source != grounding.Learned {
		t.Fatalf("%s: %+v", name, p.Provenance)
	}
	for _, d := range p.Depths {
		for _, r := range d.Relata {
			if r.Provenance.Source != grounding.Learned {
				t.Fatalf("%s D%d relatum provenance %s", name, d.Level, r.Provenance.Source)
			}
		}
	}
}
