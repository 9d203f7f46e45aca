// Package corpus reads a differential corpus: JSON Lines, each a
// fixture-format document with the reference's verdict on it, compressed
// with gzip when the file name ends in .gz. It imports nothing else of the
// project, so that the kernel's own tests can read the corpus as the
// conformance runner does.
package corpus

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Case is one line of a corpus: a document (kept as its exact JSON text)
// and the reference's verdict.
type Case struct {
	ID     string          `json:"id"`
	Note   string          `json:"note"`
	Doc    json.RawMessage `json:"doc"`
	Expect struct {
		Refused      bool              `json:"refused"`
		Axes         map[string]string `json:"axes"`
		ViewID       *string           `json:"view_id"`
		LineageCount *int              `json:"lineage_count"`
		// WarrantView is the reference's whole answer (EWP §6), kept as
		// its JSON text; absent from corpora that carry only the axes.
		WarrantView json.RawMessage `json:"warrant_view"`
	} `json:"expect"`
}

// Each calls fn with every case of the corpus at path, in file order,
// numbered from 1, and stops at the first error, fn's included.
func Each(path string, fn func(n int, c Case) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if err := fn(n, c); err != nil {
			return err
		}
	}
	return sc.Err()
}
