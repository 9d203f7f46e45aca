package grounding

import "fmt"

// Small builders for graphs written in Go. Every non-D0 depth gets one
// property, as in VRE's engine-test helper, so it survives the vacuity rule.

var authored = stamp(Authored, t0)

func prim(name string, depths ...Depth) Primitive {
	return Primitive{ID: PrimitiveID(name), Name: name, Depths: depths, Provenance: authored}
}

func dep(level int, relata ...Relatum) Depth {
	d := Depth{Level: DepthLevel(level), Relata: relata, Provenance: authored}
	if level > 0 {
		d.Properties = JSONObject{"dummy": fmt.Sprintf("D%d", level)}
	}
	return d
}

func rel(typ RelationType, target string, targetDepth int) Relatum {
	return Relatum{RelationType: typ, TargetID: PrimitiveID(target), TargetDepth: DepthLevel(targetDepth), Provenance: authored}
}

// full is D0..D3 without relata ("full(X)" in spec §7).
func full(name string) Primitive { return prim(name, dep(0), dep(1), dep(2), dep(3)) }

func mustGraph(t interface {
	Helper()
	Fatalf(string, ...any)
}, prims ...Primitive) *Graph {
	t.Helper()
	g, err := NewGraph(prims)
	if err != nil {
		t.Fatalf("NewGraph: %v", err)
	}
	return g
}
