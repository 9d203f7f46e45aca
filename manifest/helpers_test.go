package manifest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tree makes a temp dir holding
//
//	data/                 the filesystem server's root
//	data/notes.txt
//	data/protected/       what the rules protect
//	data/protected/secret.txt
//	data/ln     -> protected          (relative link)
//	data/abs    -> <dir>/data/protected (absolute link)
//	data/sub/up -> ..                 (a link to its parent)
//	data/file   -> notes.txt          (a link to a file)
//	data/loop1  -> loop2, data/loop2 -> loop1
//
// and returns its real path (a temp dir may itself sit behind a link).
func tree(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("data/protected")
	mk("data/sub")
	write("data/notes.txt")
	write("data/protected/secret.txt")
	link("protected", "data/ln")
	link(filepath.Join(dir, "data/protected"), "data/abs")
	link("..", "data/sub/up")
	link("notes.txt", "data/file")
	link("loop2", "data/loop1")
	link("loop1", "data/loop2")
	return dir
}

// fsManifest is a manifest for server-filesystem over tree(dir).
func fsManifest(t testing.TB, dir string, extra string) *Manifest {
	t.Helper()
	raw := `{
  "default": "deny",
  "roots": {"filesystem": "` + dir + `/data"},
  "redact": ["token"],
  "tools": [
    {"match": "filesystem/read_*", "kind": "read", "risk": "low", "reversible": true,
     "concepts": ["file", {"argument": "path", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]},
                         {"argument": "paths", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]}]},
    {"match": "filesystem/write_file", "kind": "write", "risk": "medium", "reversible": false, "cardinality": "single",
     "concepts": ["file", {"argument": "path", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]}],
     "propositions": ["file:{path}"], "min_depth": 1, "redact": ["/content"]},
    {"match": "filesystem/move_file", "kind": "move", "risk": "high", "reversible": false,
     "concepts": [{"argument": "source", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]},
                  {"argument": "destination", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]}],
     "propositions": ["file:{source}", "file:{destination}"]},
    {"match": "filesystem/delete_*", "deny": true},
    {"match": "filesystem/*", "kind": "other", "risk": "medium", "reversible": false}` + extra + `
  ]
}`
	m, err := ParseWith([]byte(raw), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func describe(t testing.TB, m *Manifest, name string, args any) *Call {
	t.Helper()
	c, err := m.Describe(name, mustJSON(t, args))
	if err != nil {
		t.Fatalf("Describe(%s, %v): %v", name, args, err)
	}
	return c
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	if s, ok := v.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantErr checks err is an *Error with code, field and a reason holding
// each of parts.
func wantErr(t testing.TB, err error, code, field string, parts ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *Error %s at %s", err, err, code, field)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("got %s at %q (%v), want %s at %q", e.Code, e.Field, e, code, field)
	}
	for _, p := range parts {
		if !strings.Contains(e.Error(), p) {
			t.Errorf("%v does not say %q", e, p)
		}
	}
	return e
}

// fakeFS is a filesystem of symbolic links and directories only: what
// the resolver asks, answered from maps (a path in neither does not
// exist; one in errs fails with its error).
type fakeFS struct {
	links map[string]string
	dirs  map[string]bool
	errs  map[string]error
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

func (f *fakeFS) Lstat(name string) (fs.FileInfo, error) {
	if err := f.errs[name]; err != nil {
		return nil, err
	}
	if _, ok := f.links[name]; ok {
		return fakeInfo{name, fs.ModeSymlink}, nil
	}
	if f.dirs[name] {
		return fakeInfo{name, fs.ModeDir}, nil
	}
	return nil, fs.ErrNotExist
}

func (f *fakeFS) Readlink(name string) (string, error) {
	if t, ok := f.links[name]; ok {
		return t, nil
	}
	return "", fs.ErrInvalid
}
