package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Case is one thing a target is asked: a fixture-format document and
// what the protocol says about it.
type Case struct {
	Section string
	Name    string
	Doc     []byte
	// MustRefuse: the document is invalid and every implementation must
	// refuse it.
	MustRefuse bool
	// Axes are the five expected axes (fixtures, corpus); Fields are
	// further expected top-level fields (protocol_version, …).
	Axes   map[string]any
	Fields map[string]any
	// View is a whole expected WarrantView (goldens, corpus), compared on
	// every field.
	View map[string]any
	// ViewID and Lineage are the corpus's separate expectations.
	ViewID  *string
	Lineage *int
	// Grounding, when set, makes this a grounding case: Doc is unused.
	Grounding *GroundingCase
}

// LoadPack reads the cases of a pack laid out like the reference's
// implementer pack: fixtures/ with expected/ axes, invalid/, goldens/.
func LoadPack(dir string) ([]Case, error) {
	if err := packDirExists(dir); err != nil {
		return nil, err
	}
	var cases []Case
	for _, load := range []func(string) ([]Case, error){packFixtures, packInvalid, packGoldens} {
		cs, err := load(dir)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s: no fixtures/, invalid/ or goldens/ cases found; is this a pack directory?", dir)
	}
	return cases, nil
}

// packDirExists tells a missing or mistyped --pack apart from a directory
// that holds no cases: the first is the usual mistake (a relative path
// run from outside the repository), and the answer says where it looked.
func packDirExists(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		abs, _ := filepath.Abs(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pack directory %s does not exist (looked for %s; a relative path is read from the current directory)", dir, abs)
		}
		return fmt.Errorf("pack directory %s cannot be read: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is a file, not a pack directory (a pack holds fixtures/, expected/, invalid/ and goldens/)", dir)
	}
	return nil
}

func packFixtures(dir string) ([]Case, error) {
	files, err := jsonFiles(filepath.Join(dir, "fixtures"))
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, f := range files {
		name := caseName(f)
		var want map[string]any
		if err := readJSON(filepath.Join(dir, "expected", name+".json"), &want); err != nil {
			return nil, fmt.Errorf("fixture %s has no readable expected/%s.json: %w", name, name, err)
		}
		doc, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := Case{Section: sectionOf(name), Name: name, Doc: doc, Axes: map[string]any{}, Fields: map[string]any{}}
		for _, k := range axisFields {
			c.Axes[k] = want[k]
		}
		for _, k := range []string{"protocol_version", "policy_version", "evaluated_at"} {
			if v, ok := want[k]; ok {
				c.Fields[k] = v
			}
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func packInvalid(dir string) ([]Case, error) {
	files, err := jsonFiles(filepath.Join(dir, "invalid"))
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cases = append(cases, Case{Section: Invalid, Name: caseName(f), Doc: doc, MustRefuse: true})
	}
	return cases, nil
}

func packGoldens(dir string) ([]Case, error) {
	files, err := jsonFiles(filepath.Join(dir, "goldens"))
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, f := range files {
		name := caseName(f)
		var want map[string]any
		if err := readJSON(f, &want); err != nil {
			return nil, err
		}
		doc, err := os.ReadFile(filepath.Join(dir, "fixtures", name+".json"))
		if err != nil {
			return nil, fmt.Errorf("golden %s has no fixture: %w", name, err)
		}
		cases = append(cases, Case{Section: Goldens, Name: name, Doc: doc, View: want})
	}
	return cases, nil
}

// Corpus is the report section of differential corpus cases.
const Corpus = "Corpus"

// CorpusCases turns a differential corpus into cases; limit > 0 keeps
// only the first limit lines.
func CorpusCases(path string, limit int) ([]Case, error) {
	all, err := LoadCorpus(path)
	if err != nil {
		return nil, err
	}
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	cases := make([]Case, 0, len(all))
	for _, cc := range all {
		c := Case{Section: Corpus, Name: cc.ID, Doc: cc.Doc, MustRefuse: cc.Expect.Refused,
			ViewID: cc.Expect.ViewID, Lineage: cc.Expect.LineageCount}
		if !c.MustRefuse {
			c.Axes = map[string]any{}
			for k, v := range cc.Expect.Axes {
				c.Axes[k] = v
			}
			if len(cc.Expect.WarrantView) > 0 && string(cc.Expect.WarrantView) != "null" {
				if err := json.Unmarshal(cc.Expect.WarrantView, &c.View); err != nil {
					return nil, fmt.Errorf("%s: case %s: unreadable expect.warrant_view: %w", path, cc.ID, err)
				}
			}
		}
		cases = append(cases, c)
	}
	return cases, nil
}
