package manifest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docExamples are the JSON blocks of docs/manifest.md that are manifests.
func docExamples(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "manifest.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(m[1], `"tools"`) {
			out = append(out, m[1])
		}
	}
	if len(out) < 3 {
		t.Fatalf("found %d manifest examples in docs/manifest.md", len(out))
	}
	return out
}

func TestDocExamplesParse(t *testing.T) {
	for i, ex := range docExamples(t) {
		if _, err := Parse([]byte(ex)); err != nil {
			t.Errorf("example %d: %v", i, err)
		}
	}
}

// The server-filesystem example does what the doc says, on a real tree
// standing in for /srv/data.
func TestDocFilesystemExample(t *testing.T) {
	var ex string
	for _, e := range docExamples(t) {
		if strings.Contains(e, "filesystem/move_file") {
			ex = e
		}
	}
	dir := tree(t)
	m, err := Parse([]byte(strings.ReplaceAll(ex, "/srv/data", dir+"/data")))
	if err != nil {
		t.Fatal(err)
	}
	want := "file:" + dir + "/data/protected/a.txt"
	for _, p := range []string{"protected/a.txt", dir + "/data/x/../protected/a.txt", "/" + dir + "/data/protected//a.txt", "ln/a.txt"} {
		c := describe(t, m, "filesystem/write_file", map[string]any{"path": p, "content": "x"})
		if !slices.Contains(c.Concepts, "protected_file") || !slices.Equal(c.Propositions, []string{want}) {
			t.Errorf("%s: concepts %v, propositions %v", p, c.Concepts, c.Propositions)
		}
		if string(c.Recorded) != `{"content":"[redacted]","path":"`+p+`"}` {
			t.Errorf("recorded %s", c.Recorded)
		}
	}
	c := describe(t, m, "filesystem/read_multiple_files", map[string]any{"paths": []string{"notes.txt", "abs/secret.txt"}})
	if !slices.Contains(c.Concepts, "protected_file") {
		t.Errorf("read_multiple_files: %v", c.Concepts)
	}
	if m.Permits("filesystem/delete_file") == false || m.Permits("other/x") {
		t.Error("filesystem/* lists every filesystem tool; default deny hides the rest")
	}
}
