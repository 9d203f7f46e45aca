package jsonstore

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

const indexName = "index.json"

// index is a proposition's index.json: its snapshots in the order they
// were stored, the first stored fingerprint of every identified record
// (what snapshot.Check needs) and the assertion texts of the latest
// snapshot (what List searches), so neither needs the bodies.
type index struct {
	PropositionID text          `json:"proposition_id"`
	Snapshots     []snapEntry   `json:"snapshots"`
	Records       []recordEntry `json:"records"`
	LatestTexts   []text        `json:"latest_texts"`
}

type snapEntry struct {
	// Seq numbers the proposition's snapshots from 1; the highest is the
	// latest.
	Seq    int64  `json:"seq"`
	ViewID text   `json:"view_id"`
	File   string `json:"file"`
	// Sum is snapshot.StoredSum of the view: the sha256 of the file.
	Sum string `json:"sha256"`
}

type recordEntry struct {
	Kind   snapshot.Kind `json:"kind"`
	ID     text          `json:"id"`
	Sum    string        `json:"sum"`
	ViewID text          `json:"view_id"`
}

// text is a string that survives JSON exactly. Ids decoded by the kernel
// may hold lone surrogates (as WTF-8 bytes, which are not UTF-8), and
// encoding/json would replace those with U+FFFD, merging distinct ids.
// Such a string is written as {"base64": "..."}; every other one as a
// plain JSON string.
type text string

func (t text) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return json.Marshal(string(t))
	}
	return json.Marshal(struct {
		Base64 string `json:"base64"`
	}{base64.StdEncoding.EncodeToString([]byte(t))})
}

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = text(s)
		return nil
	}
	var o struct {
		Base64 string `json:"base64"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(o.Base64)
	*t = text(raw)
	return err
}

// propState is what a batch knows about one proposition: its index as
// loaded, plus what the batch added.
type propState struct {
	id      string
	name    string // directory name: escape(id)
	records snapshot.Map
	snaps   []snapEntry
	views   map[string]int // view id → position in snaps
	texts   []string
	dirty   bool // the batch changed the index
}

// loadProp reads a proposition's index; a proposition without one is new
// (empty), which is not an error.
func loadProp(dir, id string) (*propState, error) {
	name := escape(id)
	raw, err := os.ReadFile(filepath.Join(dir, name, indexName))
	if errors.Is(err, os.ErrNotExist) {
		return &propState{id: id, name: name, records: snapshot.Map{}, views: map[string]int{}}, nil
	}
	if err != nil {
		return nil, storeErr("read index", err)
	}
	st, err := parseIndex(name, raw)
	if err == nil && st.id != id {
		err = storeErr("read index", fmt.Errorf("%s/%s belongs to proposition %q, not %q", name, indexName, st.id, id))
	}
	return st, err
}

// parseIndex reads the index.json found in directory name, checking that
// the directory is the one its proposition id escapes to.
func parseIndex(name string, raw []byte) (*propState, error) {
	var idx index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, storeErr("read index", fmt.Errorf("%s/%s: %w", name, indexName, err))
	}
	id := string(idx.PropositionID)
	if escape(id) != name {
		return nil, storeErr("read index", fmt.Errorf("%s/%s names proposition %q, whose directory is %s", name, indexName, id, escape(id)))
	}
	st := &propState{id: id, name: name, records: snapshot.Map{}, views: map[string]int{}}
	return st, st.fill(&idx)
}

func (st *propState) fill(idx *index) error {
	st.snaps = idx.Snapshots
	for i, e := range st.snaps {
		st.views[string(e.ViewID)] = i
	}
	for _, r := range idx.Records {
		sum, ok := snapshot.ParseSum(r.Sum)
		if !ok {
			return storeErr("read index", fmt.Errorf("%s: record %s %q has a malformed sum", st.name, r.Kind, r.ID))
		}
		st.records[snapshot.Key{Kind: r.Kind, ID: string(r.ID)}] = snapshot.Stored{Sum: sum, ViewID: string(r.ViewID)}
	}
	st.texts = make([]string, len(idx.LatestTexts))
	for i, t := range idx.LatestTexts {
		st.texts[i] = string(t)
	}
	return nil
}

// latest is the newest snapshot's entry; ok is false for a new proposition.
func (st *propState) latest() (snapEntry, bool) {
	if len(st.snaps) == 0 {
		return snapEntry{}, false
	}
	return st.snaps[len(st.snaps)-1], true
}

// encode renders the index with records in a stable order, so the same
// history always gives the same file.
func (st *propState) encode() []byte {
	idx := index{PropositionID: text(st.id), Snapshots: st.snaps, Records: make([]recordEntry, 0, len(st.records)),
		LatestTexts: make([]text, len(st.texts))}
	for k, v := range st.records {
		idx.Records = append(idx.Records, recordEntry{Kind: k.Kind, ID: text(k.ID), Sum: v.Sum.Hex(), ViewID: text(v.ViewID)})
	}
	slices.SortFunc(idx.Records, func(a, b recordEntry) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID))
	})
	for i, t := range st.texts {
		idx.LatestTexts[i] = text(t)
	}
	out, err := json.MarshalIndent(idx, "", " ")
	if err != nil {
		panic(err) // only strings, numbers and text: cannot fail
	}
	return out
}

func assertionTexts(v *warrant.View) []string {
	out := make([]string, len(v.Assertions))
	for i, a := range v.Assertions {
		out[i] = a.Text
	}
	return out
}
