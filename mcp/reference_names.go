package mcp

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/ewp-go/ewp/warrant"
)

// Tool name sets (WithToolNames).
const (
	// ToolNamesDefault serves the tools under this server's names.
	ToolNamesDefault = "default"
	// ToolNamesReference serves the EWP reference's eight tools under its
	// names and argument shapes (ewp_warrant_now, ewp_may_act, …), so
	// clients and prompts written for the reference work unchanged.
	ToolNamesReference = "reference"
)

// WithToolNames chooses the names the eight EWP tools are served under:
// ToolNamesDefault (the default) or ToolNamesReference. The guard and
// decision tools keep their own names either way.
func WithToolNames(set string) Option {
	return func(s *Server) { s.toolNames = set }
}

// referenceShape is how one of the reference's tools differs from ours:
// its arguments (names accepted at the top level, and the schema that
// lists them) and how they translate into ours. A tool without a shape
// takes the same arguments under the new name.
type referenceShape struct {
	props     func(ours schema) schema
	translate func(a args) (args, error)
}

var referenceShapes = map[string]*referenceShape{
	"warrant_now": nil, "evidence_view_put": nil, "evidence_view_get": nil, "list_propositions": nil,
	"check_record":    {props: nestedRecord("check", "check_id"), translate: flattenRecord("check", "")},
	"evidence_record": {props: nestedRecord("evidence", "evidence_id"), translate: flattenRecord("evidence", "text")},
	"may_act":         {props: func(ours schema) schema { return withProps(ours, optionalActionIDs) }, translate: defaultActionIDs},
	"memory_context":  {props: memoryContextProps, translate: dropQuery},
}

// referenceTools renames the eight EWP tools to the reference's names
// and shapes, when the server was asked to. The handlers stay ours: the
// reference's arguments are translated into this server's and the call
// goes through the same run, recording and checks as under our names.
func (s *Server) referenceTools(tools []toolSpec) []toolSpec {
	if s.toolNames != ToolNamesReference {
		return tools
	}
	for i := range tools {
		t := &tools[i]
		shape, ok := referenceShapes[t.tool.Name]
		if !ok {
			continue
		}
		listed := t.tool
		listed.Name = "ewp_" + t.tool.Name
		t.listed = &listed
		if shape == nil {
			continue
		}
		var in schema
		if err := json.Unmarshal(t.tool.RawInputSchema, &in); err != nil {
			panic("mcp: input schema does not unmarshal: " + err.Error()) // a bug in this package
		}
		ref := shape.props(in)
		listed.RawInputSchema = mustJSON(ref)
		t.names = paramNames(ref)
		run, translate := t.run, shape.translate
		t.run = func(ctx context.Context, a args) (any, error) {
			ours, err := translate(a)
			if err != nil {
				return nil, err
			}
			return run(ctx, ours)
		}
	}
	return tools
}

// nestedRecord gives check_record and evidence_record the reference's
// shape: the record's fields in one object under key, beside
// proposition_id, new_view_id and (evidence_record) text.
func nestedRecord(key, idField string) func(schema) schema {
	return func(ours schema) schema {
		props, _ := ours["properties"].(schema)
		required, _ := ours["required"].([]any)
		rec, recRequired, top := schema{}, []string{}, schema{}
		for name, p := range props {
			switch name {
			case "proposition_id", "ingest_attestation":
				top[name] = p
			case "assertion_text", "asserted_by", "assertion_confidence":
				// evidence_record's assertion is "text" in the reference's shape
			default:
				rec[name] = p
				if slices.Contains(required, any(name)) {
					recRequired = append(recRequired, name)
				}
			}
		}
		slices.Sort(recRequired)
		top[key] = object("The record to append ("+idField+" and its fields).", rec, recRequired...)
		top["new_view_id"] = nonEmpty("Not supported: this server derives the new snapshot's id from its content (\"v-\" + 20 hex digits); leave it out.")
		if key == "evidence" {
			top["text"] = str("Optional: also append an assertion with this text (id \"a:<evidence_id>\").")
		}
		out := schema{"type": "object", "properties": top, "required": []string{"proposition_id", key}, "additionalProperties": false}
		return out
	}
}

// flattenRecord translates {proposition_id, key: {...}, text?} into our
// flat arguments. new_view_id is refused: the ledger names a snapshot by
// its content, and an id the caller chose would be a second name for it.
func flattenRecord(key, textArg string) func(args) (args, error) {
	return func(a args) (args, error) {
		if a.has("new_view_id") {
			return nil, badArg("new_view_id", "is not supported: this server derives the new snapshot's id from its content "+
				"(\"v-\" + 20 hex digits) and returns it as view_id; leave new_view_id out")
		}
		raw, ok := a[key]
		if !ok {
			return nil, badArg(key, "is required: the record to append, an object")
		}
		rec, err := decodeObject(key, raw)
		if err != nil {
			return nil, err
		}
		out := args{}
		for k, v := range rec {
			if k == "proposition_id" || k == "ingest_attestation" || k == "assertion_text" {
				return nil, badArg(key+"."+k, "unknown field of the record; give it beside %s, not inside it", key)
			}
			out[k] = v
		}
		for _, k := range []string{"proposition_id", "ingest_attestation"} {
			if v, ok := a[k]; ok {
				out[k] = v
			}
		}
		if v, ok := a[textArg]; ok && textArg != "" {
			out["assertion_text"] = v
		}
		return out, nil
	}
}

// withProps returns ours with its properties changed by edit.
func withProps(ours schema, edit func(props schema)) schema {
	props, _ := ours["properties"].(schema)
	edit(props)
	return ours
}

// optionalActionIDs makes action.action_id and action.kind optional, as
// the reference has them.
func optionalActionIDs(props schema) {
	act, _ := props["action"].(schema)
	required, _ := act["required"].([]any)
	act["required"] = slices.DeleteFunc(slices.Clone(required), func(r any) bool { return r == "action_id" || r == "kind" })
}

// unnamedAction is the action_id and kind of an action whose caller gave
// none (the reference's may_act does not require them; the decision log
// records them as given).
const unnamedAction = "unspecified"

func defaultActionIDs(a args) (args, error) {
	raw, ok := a["action"]
	if !ok {
		return a, nil // refused as our may_act refuses a missing action
	}
	act, err := decodeObject("action", raw)
	if err != nil {
		return nil, refuse(warrant.CodeInvalidAction, "action", "must be a JSON object; got %s", kindOf(raw))
	}
	for _, k := range []string{"action_id", "kind"} {
		if !act.has(k) {
			act[k] = json.RawMessage(`"` + unnamedAction + `"`)
		}
	}
	b, err := json.Marshal(map[string]json.RawMessage(act))
	if err != nil {
		return nil, err
	}
	out := args{}
	for k, v := range a {
		out[k] = v
	}
	out["action"] = b
	return out, nil
}

// memoryContextProps adds the reference's view_id and query.
func memoryContextProps(ours schema) schema {
	return withProps(ours, func(props schema) {
		props["view_id"] = nonEmpty("Optional: evaluate this snapshot of the proposition instead of the latest.")
		props["query"] = str("Accepted for the reference's clients; it does not change the answer, which is about one proposition.")
	})
}

func dropQuery(a args) (args, error) {
	if _, _, err := a.text("", "query"); err != nil {
		return nil, err
	}
	out := args{}
	for k, v := range a {
		if k != "query" {
			out[k] = v
		}
	}
	return out, nil
}
