package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
)

// template is a proposition id with {argument} placeholders: literal
// parts and selectors, alternating (lits has one more element than args).
type template struct {
	at   string
	text string
	lits []string
	args []pointer
}

// parseTemplate reads "file:{path}", "deploy:{/target/service}". "{{"
// and "}}" are literal braces; any other lone brace is refused.
func parseTemplate(text string) (template, error) {
	t := template{text: text}
	var lit strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '{' && i+1 < len(text) && text[i+1] == '{', c == '}' && i+1 < len(text) && text[i+1] == '}':
			lit.WriteByte(c)
			i++
		case c == '}':
			return t, errors.New("has a \"}\" with no \"{\" before it (write \"}}\" for a literal brace)")
		case c == '{':
			end := strings.IndexByte(text[i:], '}')
			if end < 0 {
				return t, errors.New("has a \"{\" with no \"}\" after it (write \"{{\" for a literal brace)")
			}
			sel := text[i+1 : i+end]
			p, ok := parsePointer(sel)
			if !ok || strings.ContainsAny(sel, "{") {
				return t, errors.New("has the placeholder {" + sel + "}, which is neither an argument name nor a JSON pointer")
			}
			t.lits, t.args = append(t.lits, lit.String()), append(t.args, p)
			lit.Reset()
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	t.lits = append(t.lits, lit.String())
	return t, nil
}

// valuesFn is what one placeholder stands for in a call: the canonical
// paths of a path argument, or the text of each scalar of another.
type valuesFn func(p pointer) ([]string, error)

// expand is every id the template makes from the call (one per
// combination of the placeholders' values), at most limit of them.
func (t template) expand(values valuesFn, limit int) ([]string, error) {
	out := []string{t.lits[0]}
	for i, p := range t.args {
		vs, err := values(p)
		if err != nil {
			return nil, err
		}
		if len(out)*len(vs) > limit {
			return nil, limitErr(p.String(), "makes more than "+itoa(limit)+" propositions from template "+quote(t.text))
		}
		next := make([]string, 0, len(out)*len(vs))
		for _, prefix := range out {
			for _, v := range vs {
				next = append(next, prefix+v+t.lits[i+1])
			}
		}
		out = next
	}
	return out, nil
}

// scalarTexts is the text of a placeholder's value: a non-empty string,
// a number as sent, a boolean; or each of a list of them. An absent
// value, an empty string, null or an object is refused: a proposition
// silently dropped or made from nothing would loosen the gate.
func scalarTexts(p pointer, v any, present bool) ([]string, error) {
	if !present {
		return nil, argErr(p.String(), "is required: a proposition of this rule is built from it")
	}
	if list, ok := v.([]any); ok {
		if len(list) == 0 {
			return nil, argErr(p.String(), "is an empty list; a proposition of this rule is built from each of its values")
		}
		out := make([]string, 0, len(list))
		for i, item := range list {
			s, err := scalarText(pointer(append(append([]string{}, p...), itoa(i))), item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalarText(p, v)
	return []string{s}, err
}

func scalarText(p pointer, v any) (string, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = "false"
		if x {
			s = "true"
		}
	default:
		return "", argErr(p.String(), "must be a string, a number or a boolean to build a proposition id from")
	}
	if s == "" {
		return "", argErr(p.String(), "is empty; a proposition id is never built from an empty value")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", argErr(p.String(), "holds a control character; a proposition id never does")
	}
	return s, nil
}
