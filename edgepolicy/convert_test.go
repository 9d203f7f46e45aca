package edgepolicy

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

func mustDecimal(t *testing.T, s string) cedar.Value {
	t.Helper()
	d, err := types.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestToCedarScalars(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want cedar.Value
	}{
		{"string", "a/b", cedar.String("a/b")},
		{"true", true, cedar.True},
		{"false", false, cedar.False},
		{"integral float", 42.0, cedar.Long(42)},
		{"negative integral float", -7.0, cedar.Long(-7)},
		{"int", 5, cedar.Long(5)},
		{"int64", int64(math.MaxInt64), cedar.Long(math.MaxInt64)},
		{"fraction", 1.5, mustDecimal(t, "1.5")},
		{"negative fraction", -0.25, mustDecimal(t, "-0.25")},
		{"four digits", 3.1416, mustDecimal(t, "3.1416")},
		{"five digits keeps text", 3.14159, cedar.String("3.14159")},
		{"beyond int64 keeps text", 1e20, cedar.String("1e+20")},
		{"float32", float32(0.5), mustDecimal(t, "0.5")},
		{"json integer beyond 2^53 is exact", json.Number("9007199254740993"), cedar.Long(9007199254740993)},
		{"json integral decimal", json.Number("2.0"), cedar.Long(2)},
		{"json decimal", json.Number("-12.5"), mustDecimal(t, "-12.5")},
		{"json exponent keeps text", json.Number("1e3"), cedar.String("1e3")},
		{"json underflow keeps text", json.Number("1e-400"), cedar.String("1e-400")},
		{"json many digits keeps text", json.Number("0.10000000000000000001"), cedar.String("0.10000000000000000001")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, present, err := toCedar(c.in, "arguments.x")
			if err != nil || !present {
				t.Fatalf("toCedar(%v) = %v, present=%v, err=%v", c.in, got, present, err)
			}
			if !got.Equal(c.want) {
				t.Fatalf("toCedar(%v) = %v (%T), want %v (%T)", c.in, got, got, c.want, c.want)
			}
		})
	}
}

func TestToCedarRefusals(t *testing.T) {
	cases := []struct {
		name string
		in   any
		msg  string
	}{
		{"NaN", math.NaN(), "not finite"},
		{"Inf", math.Inf(-1), "not finite"},
		{"bad json.Number", json.Number("12abc"), "invalid number"},
		{"unsupported type", struct{}{}, "unsupported value of Go type struct {}"},
		{"nested", map[string]any{"a": []any{1.0, map[string]any{"b": math.NaN()}}}, "arguments.x.a[1].b: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := toCedar(c.in, "arguments.x")
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
		})
	}
}

func TestArgumentsRecordStructure(t *testing.T) {
	var args map[string]any
	doc := `{"path": "/tmp/x", "gone": null, "opts": {"force": true, "depth": 2, "skip": null},
	         "tags": ["a", "b", "a", null]}`
	if err := json.Unmarshal([]byte(doc), &args); err != nil {
		t.Fatal(err)
	}
	got, err := argumentsRecord(args)
	if err != nil {
		t.Fatal(err)
	}
	want := cedar.NewRecord(cedar.RecordMap{
		"path": cedar.String("/tmp/x"),
		"opts": cedar.NewRecord(cedar.RecordMap{"force": cedar.True, "depth": cedar.Long(2)}),
		"tags": cedar.NewSet(cedar.String("a"), cedar.String("b")),
	})
	if !got.Equal(want) {
		t.Fatalf("record = %v\nwant     %v", got, want)
	}
	if empty, err := argumentsRecord(nil); err != nil || empty.Len() != 0 {
		t.Fatalf("nil arguments = %v, %v; want an empty record", empty, err)
	}
}

func TestRefusalReportedIsDeterministic(t *testing.T) {
	args := map[string]any{"b": math.NaN(), "a": math.Inf(1), "c": math.NaN()}
	for range 20 {
		_, err := argumentsRecord(args)
		if err == nil || !strings.HasPrefix(err.Error(), "arguments.a:") {
			t.Fatalf("err = %v, want the first key in sorted order (arguments.a)", err)
		}
	}
}
