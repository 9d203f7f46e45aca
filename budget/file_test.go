package budget

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ewp-go/ewp/schemas"
)

var fileCases = []struct {
	src  string
	want string // "" when Parse accepts it; else the whole error
}{
	{`{"agents":{"bot":{"calls_per_minute":60,"high_risk_per_day":0,"irreversible_per_day":5}}}`, ""},
	{`{"groups":{"ops":{"calls_per_minute":1}}, "default":{"irreversible_per_day":1000000000}}`, ""},
	{`{"default":{"high_risk_per_day":1}}`, ""},
	{`{"agents":{"bot":{"calls_per_minute":60}},"groups":{}}`, ""},
	{`[]`, "budgets: must be a JSON object (json: cannot unmarshal array into Go value of type map[string]json.RawMessage)"},
	{`null`, "budgets: must be a JSON object"},
	{`{}`, `budgets: names no budget: give "agents", "groups" or "default"`},
	{`{"agents":{}}`, `budgets: names no budget: give "agents", "groups" or "default"`},
	{`{"budgets":{}}`, "budgets: budgets: unknown member (known: agents, groups, default)"},
	{`{"agents":[]}`, "budgets: agents: must be a JSON object (json: cannot unmarshal array into Go value of type map[string]json.RawMessage)"},
	{`{"agents":{"bot":{}}}`, "budgets: agents.bot: names no limit (give calls_per_minute, high_risk_per_day or irreversible_per_day)"},
	{`{"agents":{"bot":{"calls_per_mintue":5}}}`, "budgets: agents.bot.calls_per_mintue: unknown member (known: calls_per_minute, high_risk_per_day, irreversible_per_day)"},
	{`{"agents":{"bot":{"calls_per_minute":-1}}}`, "budgets: agents.bot.calls_per_minute: must be an integer from 0 to 1000000000, got -1"},
	{`{"agents":{"bot":{"calls_per_minute":1.5}}}`, "budgets: agents.bot.calls_per_minute: must be an integer from 0 to 1000000000, got 1.5"},
	{`{"agents":{"bot":{"calls_per_minute":"60"}}}`, `budgets: agents.bot.calls_per_minute: must be an integer from 0 to 1000000000, got "60"`},
	{`{"agents":{"bot":{"calls_per_minute":null}}}`, "budgets: agents.bot.calls_per_minute: must be an integer from 0 to 1000000000, got null"},
	{`{"groups":{"ops":{"high_risk_per_day":1000000001}}}`, "budgets: groups.ops.high_risk_per_day: must be an integer from 0 to 1000000000, got 1000000001"},
	{`{"default":3}`, "budgets: default: must be a JSON object (json: cannot unmarshal number into Go value of type map[string]json.RawMessage)"},
	{`{"agents":{"":{"calls_per_minute":1}}}`, "budgets: agents.: a name is 1 to 128 bytes"},
	{`{"agents":{"` + strings.Repeat("n", 129) + `":{"calls_per_minute":1}}}`, "budgets: agents." + strings.Repeat("n", 129) + ": a name is 1 to 128 bytes"},
	{`{"groups":{"a\u0007b":{"calls_per_minute":1}}}`, `budgets: groups."a\ab": a name is UTF-8 text with no control characters`},
}

func TestParseErrorsNameFieldAndRule(t *testing.T) {
	for _, tc := range fileCases {
		_, err := Parse([]byte(tc.src))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.src, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// The published schema agrees with Parse on every case: it accepts what
// Parse accepts and refuses what Parse refuses.
func TestSchemaAgreesWithParse(t *testing.T) {
	s := budgetsSchema(t)
	for _, tc := range fileCases {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.src)))
		if err != nil {
			t.Fatal(err)
		}
		verr := s.Validate(doc)
		if (verr == nil) != (tc.want == "") {
			t.Errorf("%s: schema says %v, Parse says %q", tc.src, verr, tc.want)
		}
	}
}

func budgetsSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := schemas.FS.ReadFile("budgets.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const id = "https://github.com/ewp-go/ewp/schemas/budgets.schema.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseBounds(t *testing.T) {
	if _, err := Parse(make([]byte, MaxFileBytes+1)); err == nil || err.Error() != "budgets: the file is 1048577 bytes, over the limit of 1048576" {
		t.Errorf("large file: %v", err)
	}
	var b strings.Builder
	b.WriteString(`{"agents":{`)
	for i := range MaxEntries + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"a%d":{"calls_per_minute":1}`, i)
	}
	b.WriteString("}}")
	if _, err := Parse([]byte(b.String())); err == nil || err.Error() != "budgets: 10001 agents and groups, over the limit of 10000" {
		t.Errorf("many entries: %v", err)
	}
}
