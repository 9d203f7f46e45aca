package manifest

import (
	"encoding/json"
	"slices"
	"testing"
)

// The path escapes a protected-directory rule must survive: every way of
// naming a file under data/protected is seen as protected, with its
// canonical path; every way of naming one outside is not.
func TestPathEscapesDoNotEscapeTheRule(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	secret := dir + "/data/protected/secret.txt"
	cases := []struct {
		name, path, canonical string
		protected             bool
	}{
		{"absolute", secret, secret, true},
		{"relative to the root", "protected/secret.txt", secret, true},
		{"dot segments", dir + "/data/./protected/./secret.txt", secret, true},
		{"double slash", dir + "/data//protected//secret.txt", secret, true},
		{"leading double slash", "/" + dir + "/data/protected/secret.txt", secret, true},
		{"dot-dot back in", dir + "/data/sub/../protected/secret.txt", secret, true},
		{"dot-dot relative", "sub/../protected/secret.txt", secret, true},
		{"dot-dot above the root, back in", "../data/protected/secret.txt", secret, true},
		{"relative symlink", dir + "/data/ln/secret.txt", secret, true},
		{"absolute symlink", "abs/secret.txt", secret, true},
		{"symlink to the directory itself", dir + "/data/ln", dir + "/data/protected", true},
		{"link to parent, then in", "sub/up/protected/secret.txt", secret, true},
		{"link/.. is the target's parent", "ln/../protected/new.txt", dir + "/data/protected/new.txt", true},
		{"new file under a link", "ln/new.txt", dir + "/data/protected/new.txt", true},
		{"new dirs under a link", "ln/a/b/c.txt", dir + "/data/protected/a/b/c.txt", true},
		{"missing dir then back in", "nope/../protected/x", dir + "/data/protected/x", true},
		{"trailing slash", dir + "/data/protected/", dir + "/data/protected", true},
		{"outside", dir + "/data/notes.txt", dir + "/data/notes.txt", false},
		{"outside, relative", "notes.txt", dir + "/data/notes.txt", false},
		{"a name that only starts like it", dir + "/data/protected2/x", dir + "/data/protected2/x", false},
		{"dot-dot out of it", dir + "/data/protected/../notes.txt", dir + "/data/notes.txt", false},
		{"link to a file outside", "file", dir + "/data/notes.txt", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := describe(t, m, "filesystem/write_file", map[string]any{"path": tc.path, "content": "hi"})
			if got := slices.Contains(c.Concepts, "protected_file"); got != tc.protected {
				t.Errorf("protected_file = %v, want %v (concepts %v)", got, tc.protected, c.Concepts)
			}
			if want := []string{"file:" + tc.canonical}; !slices.Equal(c.Propositions, want) {
				t.Errorf("propositions %v, want %v", c.Propositions, want)
			}
		})
	}
}

// A path one reading puts outside and another inside is protected: the
// server-filesystem reads "ln/.." lexically (its root), the kernel as the
// link target's parent (data); a rule on data/sub must hold either way.
func TestEitherReadingIsJudged(t *testing.T) {
	dir := tree(t)
	raw := `{"roots": {"fs": "` + dir + `/data"}, "tools": [{"match": "fs/*", "kind": "write", "risk": "low", "reversible": true,
	  "concepts": [{"argument": "path", "under": "` + dir + `/data/sub/x", "concepts": ["guarded"]}]}]}`
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	// kernel: sub/up -> .. is data, so sub/up/../x is <dir>/x (outside);
	// lexical: data/sub/x (inside).
	c := describe(t, m, "fs/w", map[string]any{"path": "sub/up/../x/f"})
	if !slices.Contains(c.Concepts, "guarded") {
		t.Errorf("the lexical reading is inside the rule, yet concepts are %v", c.Concepts)
	}
	c = describe(t, m, "fs/w", map[string]any{"path": "sub/up/sub/x/f"})
	if !slices.Contains(c.Concepts, "guarded") {
		t.Errorf("the kernel reading is inside the rule, yet concepts are %v", c.Concepts)
	}
}

// Look-alikes are refused, naming the argument, before any lookup.
func TestLookalikePathsAreRefused(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	cases := map[string]string{
		"fullwidth solidus":      dir + "/data／protected/secret.txt",
		"fullwidth dots":         dir + "/data/sub/．．/protected/secret.txt",
		"one dot leader":         dir + "/data/sub/\u2024\u2024/protected",
		"division slash":         dir + "/data\u2215protected/secret.txt",
		"fraction slash":         dir + "/data\u2044protected",
		"backslash":              dir + "\\data\\protected",
		"right-to-left override": dir + "/data/\u202Etxt.terces",
		"bidi isolate":           dir + "/data/\u2066protected",
		"zero-width space":       dir + "/data/pro\u200Btected/secret.txt",
		"zero-width joiner":      dir + "/data/pro\u200Dtected",
		"byte order mark":        "\uFEFFprotected/secret.txt",
		"ligature":               dir + "/data/protected/\uFB01le",
		"decomposed accent":      dir + "/data/cafe\u0301",
		"control character":      dir + "/data/protected\n/secret.txt",
		"replacement character":  dir + "/data/\uFFFD",
		"home directory":         "~/data/protected",
		"file URI":               "file://" + dir + "/data/protected/secret.txt",
		"other URI":              "s3+x://bucket/protected",
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := m.Describe("filesystem/write_file", mustJSON(t, map[string]any{"path": p}))
			wantErr(t, err, CodeUnsafePath, "/arguments/path", "filesystem/write_file")
		})
	}
	// A lone surrogate decodes to U+FFFD: refused as such.
	_, err := m.Describe("filesystem/write_file", json.RawMessage(`{"path": "a\udc80b"}`))
	wantErr(t, err, CodeUnsafePath, "/arguments/path", "replacement")
	// An ordinary non-ASCII name is not a look-alike.
	describe(t, m, "filesystem/write_file", map[string]any{"path": "café/日本語.txt"})
	describe(t, m, "filesystem/write_file", map[string]any{"path": "notes:v2.txt"})
	describe(t, m, "filesystem/write_file", map[string]any{"path": "a/b://c"})
}

func TestPathsTheKernelRefusesAreRefused(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	for name, p := range map[string]string{
		"loop":                 "loop1/x",
		"through a file":       "notes.txt/x",
		"through a file link":  "file/x",
		"empty":                "",
		"too long":             "/" + string(make([]byte, MaxPathBytes)),
		"relative, not string": "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.Describe("filesystem/write_file", mustJSON(t, map[string]any{"path": p}))
			if err == nil {
				t.Fatal("resolved")
			}
		})
	}
	_, err := m.Describe("filesystem/write_file", mustJSON(t, map[string]any{"path": "loop1/x"}))
	wantErr(t, err, CodeUnsafePath, "/arguments/path", "symbolic links")
	_, err = m.Describe("filesystem/write_file", mustJSON(t, map[string]any{"path": 7}))
	wantErr(t, err, CodeInvalidArgument, "/arguments/path", "string")
}

func TestRelativePathNeedsARoot(t *testing.T) {
	dir := tree(t)
	raw := `{"tools": [{"match": "claude-code/Write", "kind": "write", "risk": "medium", "reversible": false,
	  "concepts": [{"argument": "file_path", "under": "` + dir + `/data/protected", "concepts": ["protected_file"]}]}]}`
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	args := mustJSON(t, map[string]any{"file_path": "protected/secret.txt"})
	_, err = m.Describe("claude-code/Write", args)
	wantErr(t, err, CodeUnsafePath, "/arguments/file_path", "no root is configured for server \"claude-code\"")
	c, err := m.DescribeIn("claude-code/Write", args, dir+"/data")
	if err != nil || !slices.Contains(c.Concepts, "protected_file") {
		t.Fatalf("with the session's root: %v, %v", c, err)
	}
	_, err = m.DescribeIn("claude-code/Write", args, "relative/root")
	wantErr(t, err, CodeInvalidArgument, "/root", "absolute")
	// Options.Roots supplies one too.
	m, err = ParseWith([]byte(raw), Options{Roots: map[string]string{"claude-code": dir + "/data"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := describe(t, m, "claude-code/Write", args); !slices.Contains(c.Concepts, "protected_file") {
		t.Errorf("with Options.Roots: concepts %v", c.Concepts)
	}
}

func TestListOfPaths(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/read_multiple_files", map[string]any{"paths": []string{"notes.txt", "ln/secret.txt"}})
	if !slices.Equal(c.Concepts, []string{"file", "protected_file"}) {
		t.Errorf("concepts %v", c.Concepts)
	}
	c = describe(t, m, "filesystem/read_multiple_files", map[string]any{"paths": []string{"notes.txt", "sub"}})
	if !slices.Equal(c.Concepts, []string{"file"}) {
		t.Errorf("concepts %v", c.Concepts)
	}
	_, err := m.Describe("filesystem/read_multiple_files", mustJSON(t, map[string]any{"paths": []any{"notes.txt", "ln／x"}}))
	wantErr(t, err, CodeUnsafePath, "/arguments/paths/1")
	_, err = m.Describe("filesystem/read_multiple_files", mustJSON(t, map[string]any{"paths": []any{"notes.txt", 3}}))
	wantErr(t, err, CodeInvalidArgument, "/arguments/paths/1")
}

func TestMoveJudgesBothEnds(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/move_file", map[string]any{"source": "notes.txt", "destination": "ln/moved.txt"})
	if !slices.Equal(c.Concepts, []string{"protected_file"}) {
		t.Errorf("concepts %v", c.Concepts)
	}
	want := []string{"file:" + dir + "/data/notes.txt", "file:" + dir + "/data/protected/moved.txt"}
	if !slices.Equal(c.Propositions, want) {
		t.Errorf("propositions %v, want %v", c.Propositions, want)
	}
	c = describe(t, m, "filesystem/move_file", map[string]any{"source": "notes.txt", "destination": "sub/n.txt"})
	if len(c.Concepts) != 0 {
		t.Errorf("concepts %v", c.Concepts)
	}
}

func TestFirstMatchWinsAndDefaults(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	for name, want := range map[string]bool{
		"filesystem/read_file":      true,
		"filesystem/delete_file":    false, // deny rule before the catch-all
		"filesystem/list_directory": true,  // the catch-all
		"other/read_file":           false, // default deny
		"filesystem":                false,
		"/read_file":                false,
	} {
		if got := m.Permits(name); got != want {
			t.Errorf("Permits(%q) = %v, want %v", name, got, want)
		}
	}
	c := describe(t, m, "filesystem/list_directory", map[string]any{"path": "."})
	if c.Rule != "filesystem/*" || c.Kind != "other" || c.Deny {
		t.Errorf("catch-all: %+v", c)
	}
	c = describe(t, m, "filesystem/delete_file", map[string]any{"path": "x"})
	if !c.Deny || c.Rule != "filesystem/delete_*" || c.Risk != "high" || c.Reversible {
		t.Errorf("deny rule: %+v", c)
	}
	c = describe(t, m, "other/tool", map[string]any{"token": "s3cret"})
	if !c.Deny || c.Rule != DefaultRule || c.Kind != UnlistedKind {
		t.Errorf("default deny: %+v", c)
	}
	if string(c.Recorded) != `{"token":"[redacted]"}` {
		t.Errorf("the top-level redaction applies to unmatched calls too: %s", c.Recorded)
	}
	confirm, err := Parse([]byte(`{"default": "confirm", "tools": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if !confirm.Permits("any/tool") {
		t.Error("default confirm hides tools")
	}
	c = describe(t, confirm, "any/tool", nil)
	if c.Deny || c.Rule != DefaultRule || c.Risk != "high" || c.Reversible || c.ConfirmBy != ConfirmOperator {
		t.Errorf("default confirm: %+v", c)
	}
}

func TestGlobs(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"a*", "abc", true}, {"a*c", "abc", true},
		{"a*c", "ab", false}, {"?", "é", true}, {"??", "é", false}, {"a?c", "abc", true},
		{"*_file", "read_file", true}, {"*_file", "read_files", false}, {"*a*b", "xaab", true},
		{"read_*", "read_", true}, {"read_*", "read", false}, {"a**b", "ab", true},
		{"[ab]", "a", false}, {"[ab]", "[ab]", true}, {"x*y*z", "xyyyzz", true},
	}
	for _, tc := range cases {
		if got := glob(tc.pat, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v", tc.pat, tc.s, got)
		}
	}
	m, err := Parse([]byte(`{"tools": [{"match": "*/Bash", "kind": "exec", "risk": "high", "reversible": false},
	  {"match": "srv/a/*", "kind": "k", "risk": "low", "reversible": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Permits("claude-code/Bash") || m.Permits("a/b/Bash") || m.Permits("claude-code/Bash2") {
		t.Error("a server glob matches the server part, the tool part after the first /")
	}
	if !m.Permits("srv/a/b/c") || m.Permits("srv/b/c") {
		t.Error("a tool name may hold /")
	}
}

func TestArgumentsAreCanonicalAndStrict(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/list_directory", `{"z": 1.50, "a": {"y": [1e3, "<&>"], "b": null}}`)
	if want := `{"a":{"b":null,"y":[1e3,"<&>"]},"z":1.50}`; string(c.Arguments) != want {
		t.Errorf("canonical arguments %s, want %s", c.Arguments, want)
	}
	for name, tc := range map[string]struct{ raw, field string }{
		"duplicate member":        {`{"path": "notes.txt", "path": "protected/secret.txt"}`, "/arguments/path"},
		"nested duplicate":        {`{"o": {"k": 1, "k": 2}}`, "/arguments/o/k"},
		"not an object":           {`["path"]`, "/arguments"},
		"trailing data":           {`{} {}`, "/arguments"},
		"invalid JSON":            {`{"a": }`, "/arguments/a"},
		"invalid UTF-8":           {"{\"a\": \"\xff\"}", "/arguments"},
		"escaped member name dup": {`{"p\u0061th": "x", "path": "y"}`, "/arguments/path"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.Describe("filesystem/list_directory", json.RawMessage(tc.raw))
			wantErr(t, err, CodeInvalidArgument, tc.field)
		})
	}
	for _, raw := range []string{"", "null", " "} {
		if c := describe(t, m, "filesystem/list_directory", raw); string(c.Arguments) != "{}" {
			t.Errorf("%q: arguments %s, want {}", raw, c.Arguments)
		}
	}
}

func TestRedaction(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/write_file", map[string]any{"path": "notes.txt", "content": "body", "token": "t", "keep": "k"})
	if want := `{"content":"[redacted]","keep":"k","path":"notes.txt","token":"[redacted]"}`; string(c.Recorded) != want {
		t.Errorf("recorded %s, want %s", c.Recorded, want)
	}
	if want := `{"content":"body","keep":"k","path":"notes.txt","token":"t"}`; string(c.Arguments) != want {
		t.Errorf("arguments %s changed by the redaction", c.Arguments)
	}
	// A pointer reaches inside objects and lists; an absent one changes nothing.
	m2, err := Parse([]byte(`{"tools": [{"match": "s/t", "kind": "k", "risk": "low", "reversible": true,
	  "redact": ["/env/API_KEY", "/headers/1", "/a~1b", "missing", "/x/y/z"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c = describe(t, m2, "s/t", map[string]any{"env": map[string]any{"API_KEY": "k", "HOME": "/h"}, "headers": []any{"a", "b"}, "a/b": 1, "x": 1})
	if want := `{"a/b":"[redacted]","env":{"API_KEY":"[redacted]","HOME":"/h"},"headers":["a","[redacted]"],"x":1}`; string(c.Recorded) != want {
		t.Errorf("recorded %s, want %s", c.Recorded, want)
	}
}

func TestPropositionTemplates(t *testing.T) {
	dir := tree(t)
	raw := `{"roots": {"s": "` + dir + `/data"}, "tools": [{"match": "s/*", "kind": "k", "risk": "low", "reversible": true,
	  "paths": ["/target/file"],
	  "propositions": ["fixed", "svc:{service}@{/target/env}", "n:{count}", "f:{/target/file}", "lit:{{x}}", "each:{names}"]}]}`
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"service": "api", "count": 3, "names": []any{"a", "b"},
		"target": map[string]any{"env": "prod", "file": "ln/../ln/x"}}
	c := describe(t, m, "s/t", args)
	want := []string{"fixed", "svc:api@prod", "n:3", "f:" + dir + "/data/protected/x", "lit:{x}", "each:a", "each:b"}
	if !slices.Equal(c.Propositions, want) {
		t.Errorf("propositions %v, want %v", c.Propositions, want)
	}
	for name, tc := range map[string]struct {
		edit  func(map[string]any)
		field string
	}{
		"missing":       {func(a map[string]any) { delete(a, "service") }, "/arguments/service"},
		"empty":         {func(a map[string]any) { a["service"] = "" }, "/arguments/service"},
		"object":        {func(a map[string]any) { a["service"] = map[string]any{} }, "/arguments/service"},
		"null":          {func(a map[string]any) { a["service"] = nil }, "/arguments/service"},
		"empty list":    {func(a map[string]any) { a["names"] = []any{} }, "/arguments/names"},
		"empty in list": {func(a map[string]any) { a["names"] = []any{"a", ""} }, "/arguments/names/1"},
		"control":       {func(a map[string]any) { a["service"] = "a\nb" }, "/arguments/service"},
		"missing path":  {func(a map[string]any) { a["target"] = map[string]any{"env": "prod"} }, "/arguments/target/file"},
	} {
		t.Run(name, func(t *testing.T) {
			a := map[string]any{}
			for k, v := range args {
				a[k] = v
			}
			tc.edit(a)
			_, err := m.Describe("s/t", mustJSON(t, a))
			wantErr(t, err, CodeInvalidArgument, tc.field, `rule "s/*"`)
		})
	}
}

func TestMatchesDerivation(t *testing.T) {
	m, err := Parse([]byte(`{"tools": [{"match": "claude-code/Bash", "kind": "exec", "risk": "high", "reversible": false,
	  "concepts": ["shell", {"argument": "command", "matches": "rm *", "concepts": ["delete"]},
	                        {"argument": "command", "matches": "*git push*", "concepts": ["publish"]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := describe(t, m, "claude-code/Bash", map[string]any{"command": "rm -rf build"})
	if !slices.Equal(c.Concepts, []string{"shell", "delete"}) {
		t.Errorf("concepts %v", c.Concepts)
	}
	c = describe(t, m, "claude-code/Bash", map[string]any{"command": "make && git push origin"})
	if !slices.Equal(c.Concepts, []string{"shell", "publish"}) {
		t.Errorf("concepts %v", c.Concepts)
	}
	_, err = m.Describe("claude-code/Bash", mustJSON(t, map[string]any{"command": 1}))
	wantErr(t, err, CodeInvalidArgument, "/arguments/command")
}

func TestNames(t *testing.T) {
	m, err := Parse([]byte(`{"default": "confirm", "tools": []}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, code := range map[string]string{
		"":               CodeInvalidArgument,
		"noslash":        CodeInvalidArgument,
		"/tool":          CodeInvalidArgument,
		"srv/":           CodeInvalidArgument,
		"srv/to\u200Bol": CodeInvalidArgument,
		"srv/t\x00":      CodeInvalidArgument,
		"srv/\xff":       CodeInvalidArgument,
		"srv/" + string(make([]byte, MaxNameBytes)): CodeLimitExceeded,
	} {
		_, err := m.Describe(name, nil)
		wantErr(t, err, code, "/name")
	}
}

// A rule's directory that is itself a link holds for the directory it
// names: resolved at the call, and read as written too.
func TestRuleDirectoryBehindALink(t *testing.T) {
	dir := tree(t)
	raw := `{"roots": {"fs": "` + dir + `/data"}, "tools": [{"match": "fs/*", "kind": "write", "risk": "low", "reversible": true,
	  "concepts": [{"argument": "path", "under": "` + dir + `/data/ln", "concepts": ["guarded"]}]},
	  {"match": "bad/*", "kind": "write", "risk": "low", "reversible": true,
	  "concepts": [{"argument": "path", "under": "` + dir + `/data/loop1", "concepts": ["guarded"]}]}]}`
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir + "/data/protected/secret.txt", "ln/secret.txt", "abs/x"} {
		if c := describe(t, m, "fs/w", map[string]any{"path": p}); !slices.Contains(c.Concepts, "guarded") {
			t.Errorf("%s: concepts %v", p, c.Concepts)
		}
	}
	if c := describe(t, m, "fs/w", map[string]any{"path": "notes.txt"}); len(c.Concepts) != 0 {
		t.Errorf("notes.txt: concepts %v", c.Concepts)
	}
	// A directory the kernel cannot resolve refuses the call: the rule
	// could not be judged.
	_, err = m.Describe("bad/w", mustJSON(t, map[string]any{"path": "/tmp"}))
	wantErr(t, err, CodeUnsafePath, "/tools/1/concepts/0/under", "bad/*")
}

// An argument error names the rule the call fell under, "default" when
// none matched.
func TestArgumentErrorsNameTheRule(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	for name, rule := range map[string]string{
		"filesystem/list_directory": "filesystem/*",
		"filesystem/delete_file":    "filesystem/delete_*",
		"other/tool":                DefaultRule,
	} {
		_, err := m.Describe(name, json.RawMessage(`{"a": 1, "a": 2}`))
		if e := wantErr(t, err, CodeInvalidArgument, "/arguments/a"); e.Rule != rule {
			t.Errorf("%s: rule %q, want %q", name, e.Rule, rule)
		}
	}
}

// What a Call holds is its own: changing it changes nothing in the
// manifest.
func TestCallsShareNothingWithTheManifest(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/write_file", map[string]any{"path": "notes.txt"})
	*c.MinDepth = 4
	c.Concepts[0] = "changed"
	again := describe(t, m, "filesystem/write_file", map[string]any{"path": "notes.txt"})
	if *again.MinDepth != 1 || again.Concepts[0] != "file" {
		t.Errorf("the manifest changed with a call: min_depth %d, concepts %v", *again.MinDepth, again.Concepts)
	}
}
