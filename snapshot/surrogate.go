package snapshot

import (
	"fmt"
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
	c.str("proposition_id", v.PropositionID)
	c.str("view_id", v.ViewID)
	c.str("retrieval_scope", v.RetrievalScope)
	c.list("subjects", v.Subjects)
	c.list("omitted_sources", v.OmittedSources)
	for i, a := range v.Assertions {
		p := fmt.Sprintf("assertions[%d]", i)
		c.strs(p, "assertion_id", a.AssertionID, "text", a.Text, "asserted_by", a.AssertedBy,
			"asserted_at", a.AssertedAt, "proposition_id", a.PropositionID)
		c.source(p+".source", a.Source)
	}
	for i, e := range v.Evidence {
		p := fmt.Sprintf("evidence[%d]", i)
		c.strs(p, "evidence_id", e.EvidenceID, "polarity", e.Polarity, "content", e.Content,
			"observed_at", e.ObservedAt, "proposition_id", e.PropositionID)
		c.source(p+".source", e.Source)
	}
	for i, k := range v.Checks {
		p := fmt.Sprintf("checks[%d]", i)
		c.strs(p, "check_id", k.CheckID, "method", k.Method, "scope", k.Scope,
			"observed_at", k.ObservedAt, "result", k.Result)
		c.list(p+".subjects", k.Subjects)
		c.source(p+".source", k.Source)
	}
	for i, k := range v.Conflicts {
		p := fmt.Sprintf("conflicts[%d]", i)
		c.strs(p, "conflict_id", k.ConflictID, "status", k.Status, "note", k.Note)
		c.list(p+".proposition_ids", k.PropositionIDs)
	}
	for i, e := range v.Lineage {
		c.strs(fmt.Sprintf("lineage[%d]", i), "kind", e.Kind, "from_id", e.FromID, "to_id", e.ToID)
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
type surrogates struct{ field string }

func (c *surrogates) str(field, s string) {
	if c.field == "" && hasLoneSurrogate(s) {
		c.field = field
	}
}

// strs checks name/value pairs under one record's path.
func (c *surrogates) strs(prefix string, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		c.str(prefix+"."+kv[i], kv[i+1])
	}
}

func (c *surrogates) list(field string, ss []string) {
	for i, s := range ss {
		c.str(field+"["+strconv.Itoa(i)+"]", s)
	}
}

func (c *surrogates) source(p string, s warrant.SourceRef) {
	c.strs(p, "source_id", s.SourceID, "lineage_id", s.LineageID, "origin_type", s.OriginType,
		"origin_locator", s.OriginLocator, "snapshot_id", s.SnapshotID,
		"content_hash", s.ContentHash, "observed_at", s.ObservedAt)
	if s.ExtractorID != nil {
		c.str(p+".extractor_id", *s.ExtractorID)
	}
	if s.ParentSourceID != nil {
		c.str(p+".parent_source_id", *s.ParentSourceID)
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
