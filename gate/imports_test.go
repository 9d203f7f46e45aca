package gate

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ewp-go/ewp"

// The gate is one gate for every entrance: neither it nor anything it
// imports may import an MCP package (the SDK or this module's mcp), so a
// gateway or a client hook can use it without the MCP server.
func TestGateImportsNoMCP(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, imp := range directImports(t, filepath.Join(root, strings.TrimPrefix(pkg, module))) {
			if strings.Contains(imp, "mark3labs") || imp == module+"/mcp" || strings.HasPrefix(imp, module+"/mcp/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
			if strings.HasPrefix(imp, module+"/") {
				walk(imp)
			}
		}
	}
	walk(module + "/gate")
	if len(seen) < 3 {
		t.Fatalf("walked only %v: the walk is broken", seen)
	}
}

// directImports lists the imports of the non-test Go files in dir.
func directImports(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out = append(out, p)
		}
	}
	return out
}
