package snapshot

import (
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// CheckSurrogates refuses a view holding a lone UTF-16 surrogate in any
// string (ids, texts, times, subjects, source fields, lineage endpoints,
// and \uD800-style escapes in adapter_meta) with warrant.CodeLoneSurrogate
// naming the field. The kernel keeps such strings as WTF-8, as the
// reference does, but the JSON libraries between an agent and the server
// rewrite them to U+FFFD: a stored "P-\ud800" would be asked about as
// "P-\ufffd", and the server would answer for another proposition or for
// none. So every store refuses them at the write, where the writer can
// still fix the input.
func CheckSurrogates(v *warrant.View) error {
	c := &surrogates{}
	c.str(v.PropositionID, "proposition_id")
	c.str(v.ViewID, "view_id")
	c.str(v.RetrievalScope, "retrieval_scope")
	c.list(v.Subjects, "subjects", -1, "")
	c.list(v.OmittedSources, "omitted_sources", -1, "")
	for i := range v.Assertions {
		a := &v.Assertions[i]
		c.rec("assertions", i, "assertion_id", a.AssertionID, "text", a.Text, "asserted_by", a.AssertedBy,
			"asserted_at", a.AssertedAt, "proposition_id", a.PropositionID)
		c.source("assertions", i, &a.Source)
	}
	for i := range v.Evidence {
		e := &v.Evidence[i]
		c.rec("evidence", i, "evidence_id", e.EvidenceID, "polarity", e.Polarity, "content", e.Content,
			"observed_at", e.ObservedAt, "proposition_id", e.PropositionID)
		c.source("evidence", i, &e.Source)
	}
	for i := range v.Checks {
		k := &v.Checks[i]
		c.rec("checks", i, "check_id", k.CheckID, "method", k.Method, "scope", k.Scope,
			"observed_at", k.ObservedAt, "result", k.Result)
		c.list(k.Subjects, "checks", i, "subjects")
		c.source("checks", i, &k.Source)
	}
	for i := range v.Conflicts {
		k := &v.Conflicts[i]
		c.rec("conflicts", i, "conflict_id", k.ConflictID, "status", k.Status, "note", k.Note)
		c.list(k.PropositionIDs, "conflicts", i, "proposition_ids")
	}
	for i := range v.Lineage {
		e := &v.Lineage[i]
		c.rec("lineage", i, "kind", e.Kind, "from_id", e.FromID, "to_id", e.ToID)
	}
	if c.field == "" && loneEscape(v.AdapterMeta) {
		c.field = "adapter_meta"
	}
	if c.field == "" {
		return nil
	}
	return &warrant.Error{Code: warrant.CodeLoneSurrogate, Field: c.field,
		Rule: "the value holds a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF escape); JSON clients rewrite it to U+FFFD, so it could never be asked for again as stored; replace it with the intended character or drop it"}
}

// surrogates remembers the first field found holding a lone surrogate.
// Field names are built only for that one: every view of a large load
// passes through here, and naming every string would cost more than
// scanning it.
type surrogates struct{ field string }

func (c *surrogates) str(s, field string) {
	if c.field == "" && hasLoneSurrogate(s) {
		c.field = field
	}
}

// rec checks name/value pairs of record i of a list (kind[i].name).
func (c *surrogates) rec(kind string, i int, kv ...string) {
	for j := 0; j+1 < len(kv) && c.field == ""; j += 2 {
		if hasLoneSurrogate(kv[j+1]) {
			c.field = kind + "[" + strconv.Itoa(i) + "]." + kv[j]
		}
	}
}

// list checks a list of strings: the view's own (i < 0, named kind) or
// one held by record i (kind[i].sub).
func (c *surrogates) list(ss []string, kind string, i int, sub string) {
	for j, s := range ss {
		if c.field != "" || !hasLoneSurrogate(s) {
			continue
		}
		c.field = kind
		if i >= 0 {
			c.field += "[" + strconv.Itoa(i) + "]." + sub
		}
		c.field += "[" + strconv.Itoa(j) + "]"
	}
}

func (c *surrogates) source(kind string, i int, s *warrant.SourceRef) {
	var ext, parent string
	if s.ExtractorID != nil {
		ext = *s.ExtractorID
	}
	if s.ParentSourceID != nil {
		parent = *s.ParentSourceID
	}
	before := c.field
	c.rec(kind, i, "source_id", s.SourceID, "lineage_id", s.LineageID, "origin_type", s.OriginType,
		"origin_locator", s.OriginLocator, "snapshot_id", s.SnapshotID,
		"content_hash", s.ContentHash, "observed_at", s.ObservedAt,
		"extractor_id", ext, "parent_source_id", parent)
	if before == "" && c.field != "" {
		// kind[i].name -> kind[i].source.name
		at := len(kind) + len(strconv.Itoa(i)) + 3
		c.field = c.field[:at] + "source." + c.field[at:]
	}
}

// hasLoneSurrogate finds the WTF-8 form of a surrogate code point (ED A0-BF
// xx), which is how the kernel carries one; valid UTF-8 never has it, since
// a pair decodes to one four-byte character.
func hasLoneSurrogate(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF {
			return true
		}
	}
	return false
}

// loneEscape finds an unpaired \uD800-\uDFFF escape in JSON text (the
// kernel re-serialises adapter_meta with every non-ASCII character
// escaped, so a surrogate there is an escape, not bytes).
func loneEscape(js string) bool {
	pendingHigh := false
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' || i+1 >= len(js) {
			if pendingHigh {
				return true
			}
			continue
		}
		if js[i+1] != 'u' || i+6 > len(js) {
			if pendingHigh {
				return true
			}
			i++ // an escaped character, possibly a backslash: skip it
			continue
		}
		u, err := strconv.ParseUint(js[i+2:i+6], 16, 32)
		i += 5
		switch {
		case err != nil:
			pendingHigh = false
		case u >= 0xD800 && u <= 0xDBFF:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case u >= 0xDC00 && u <= 0xDFFF:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
	}
	return pendingHigh
}
