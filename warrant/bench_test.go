package warrant_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// packFixtures loads the reference pack's fixture documents from ../shared
// when present; the benchmark measures decode + validate + evaluate.
func packFixtures(b *testing.B) [][]byte {
	files, _ := filepath.Glob("../../shared/ewp-pack/fixtures/*.json")
	if len(files) == 0 {
		b.Skip("../shared/ewp-pack not present")
	}
	var docs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, data)
	}
	return docs
}

func BenchmarkPackFixtures(b *testing.B) {
	docs := packFixtures(b)
	var bytes int
	for _, d := range docs {
		bytes += len(d)
	}
	b.SetBytes(int64(bytes / len(docs)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, err := warrant.DecodeDocument(docs[i%len(docs)])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := warrant.Evaluate(doc.View, doc.EvaluatedAt); err != nil {
			b.Fatal(err)
		}
	}
}
