package schemas

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/warrant"
)

// packFiles returns the pack's files in dir ("fixtures", "invalid").
func packFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := sharedtest.PackFiles(t, filepath.Join(sharedtest.Dir(t), "ewp-pack"), dir)
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		out[f.Name] = f.Data
	}
	return out
}

// kernelRefuses is the whole verdict of warrant_now on a document: decode,
// policy identity, and a parseable evaluated_at when one is given.
func kernelRefuses(raw []byte) error {
	doc, err := warrant.DecodeDocument(raw)
	if err != nil {
		return err
	}
	if doc.EvaluatedAt != "" {
		_, err = warrant.Evaluate(doc.View, doc.EvaluatedAt)
	}
	return err
}

// readShared reads a file under ../shared.
func readShared(t *testing.T, parts ...string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(append([]string{sharedtest.Dir(t)}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
