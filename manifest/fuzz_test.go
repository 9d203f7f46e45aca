package manifest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// resolveSeeds walk the links of tree(): through, back out of, into
// loops and files, with every kind of dot and slash.
var resolveSeeds = []string{
	"data/ln/secret.txt", "data/abs/../notes.txt", "data/sub/up/ln/../notes.txt",
	"data//./protected/", "data/sub/up/sub/up/abs", "data/loop1", "data/loop1/x",
	"data/file", "data/file/x", "data/file/..", "data/nope/../ln", "data/nope/x/../../abs/secret.txt",
	"data/ln/../../data/ln/./", "../", ".", "", "data/sub/up/../", "data/abs/./../ln/..",
}

// vocabulary is what the fuzzer builds paths from: each byte of its
// first input picks a component, so most inputs walk the tree's links
// instead of missing it; its second input is appended as written.
var vocabulary = []string{"data", "ln", "abs", "sub", "up", "file", "loop1", "protected",
	"secret.txt", "notes.txt", "nope", ".", "..", "", "/"}

// FuzzResolveMatchesTheKernel holds the resolver to the operating system
// on a tree with relative, absolute, parent, file and looping links:
// wherever the kernel resolves a path (os.Stat succeeds), ours gives what
// filepath.EvalSymlinks gives; where the kernel finds a loop or a file
// with more after it, ours refuses;
// where a component is missing, ours resolves as far as the path exists:
// every prefix of its answer that exists is a real directory, no link.
//
//	go test -run '^$' -fuzz FuzzResolveMatchesTheKernel -fuzztime 30s ./manifest/
func FuzzResolveMatchesTheKernel(f *testing.F) {
	dir := tree(f)
	for _, s := range resolveSeeds {
		f.Add([]byte{}, s)
	}
	f.Add([]byte{0, 1, 12, 1, 8}, "")
	f.Add([]byte{0, 3, 4, 3, 4, 2, 12, 9}, "/x")
	r := resolver{fs: OSFS{}}
	f.Fuzz(func(t *testing.T, steps []byte, tail string) {
		parts := make([]string, 0, len(steps))
		for _, b := range steps {
			parts = append(parts, vocabulary[int(b)%len(vocabulary)])
		}
		rel := strings.Join(parts, "/") + tail
		if len(rel) > 1024 || strings.ContainsRune(rel, 0) {
			return
		}
		p := dir + "/" + rel
		got, err := r.resolve(p)
		_, statErr := os.Stat(p)
		switch {
		case statErr == nil:
			want, werr := filepath.EvalSymlinks(p)
			if werr != nil {
				t.Fatalf("the kernel resolves %q but EvalSymlinks says %v", rel, werr)
			}
			if !within(want, dir) && !within(got, dir) {
				return // left the tree (the machine's own links are not ours to compare)
			}
			if err != nil || got != want {
				t.Fatalf("%q: ours %q (%v), the OS's %q", rel, got, err, want)
			}
		case errors.Is(statErr, syscall.ELOOP):
			if err == nil {
				t.Fatalf("%q: the kernel finds a loop; ours resolves it to %q", rel, got)
			}
		case errors.Is(statErr, syscall.ENOTDIR):
			if err == nil {
				t.Fatalf("%q: the kernel finds a file where a directory must be; ours resolves it to %q", rel, got)
			}
		case errors.Is(statErr, fs.ErrNotExist):
			if err != nil {
				// Ours walks on past a missing component (a later ".." can
				// come back), so it may meet what the kernel, stopping at
				// the first missing one, never reached: a refusal then is
				// the safe side, a resolution is checked below.
				if !errors.Is(err, ErrSymlinkLoop) && !errors.Is(err, ErrNotDir) && !errors.Is(err, ErrPathTooLong) &&
					!errors.Is(err, syscall.ENAMETOOLONG) {
					t.Fatalf("%q: a missing path gives %v", rel, err)
				}
				return
			}
			realAsFarAsItExists(t, rel, got)
		}
	})
}

// realAsFarAsItExists fails unless every existing prefix of p is a real
// directory (or, last, a file): no symbolic link is left in it.
func realAsFarAsItExists(t *testing.T, rel, p string) {
	t.Helper()
	if p != filepath.Clean(p) || !filepath.IsAbs(p) {
		t.Fatalf("%q: resolved to %q, not clean and absolute", rel, p)
	}
	for q := p; q != "/"; q = filepath.Dir(q) {
		fi, err := os.Lstat(q)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t.Fatalf("%q: resolved to %q, which still holds the link %q", rel, p, q)
		}
	}
}

// FuzzDescribe: any name and arguments are described or refused with an
// *Error, never a panic; what is described has canonical arguments that
// describe the same again.
//
//	go test -run '^$' -fuzz FuzzDescribe -fuzztime 10s ./manifest/
func FuzzDescribe(f *testing.F) {
	dir := tree(f)
	m := fsManifest(f, dir, "")
	f.Add("filesystem/write_file", `{"path": "ln/x", "content": "c"}`)
	f.Add("filesystem/read_multiple_files", `{"paths": ["ln/secret.txt", "sub/up/abs"]}`)
	f.Add("filesystem/move_file", `{"source": "a", "destination": "b", "source": "c"}`)
	f.Add("x/y", `{"a": [[[[1]]]], "b": 1e999}`)
	f.Fuzz(func(t *testing.T, name, args string) {
		c, err := m.Describe(name, json.RawMessage(args))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		again, err := m.Describe(name, c.Arguments)
		if err != nil || string(again.Arguments) != string(c.Arguments) || again.Rule != c.Rule ||
			strings.Join(again.Concepts, ",") != strings.Join(c.Concepts, ",") {
			t.Fatalf("canonical %s describes differently: %v", c.Arguments, err)
		}
	})
}
