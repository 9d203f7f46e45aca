package jsonstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ewp-go/ewp/warrant"
)

func isCode(err error, code string) bool {
	var we *warrant.Error
	return errors.As(err, &we) && we.Code == code
}

// awkwardIDs are ids a file system could misread: separators, dot names,
// case twins, Unicode in two normal forms, control bytes, invalid UTF-8
// (a lone surrogate as the kernel keeps it), store file names, and ids
// long enough to need hashing, including two that share their prefix.
var awkwardIDs = []string{
	"P", "p", "P-x", "p-X", "a/b", "../../etc/passwd", ".", "..", "...", ".lock", ".journal", "index.json",
	"~", "%41", "A", "é", "e\u0301", "日本語", "a\x00b", "tab\tnew\nline", "\xed\xa0\x80", " ", "CON", "nul",
	strings.Repeat("x", 300), strings.Repeat("x", 299) + "y", strings.Repeat("É", 200), strings.Repeat("%", 100),
}

func TestEscapeIsSafeAndInjective(t *testing.T) {
	seen := map[string]string{}
	for _, id := range awkwardIDs {
		name := escape(id)
		switch {
		case name == "" || name == "." || name == ".." || strings.HasPrefix(name, "."):
			t.Errorf("%q escapes to the unsafe name %q", id, name)
		case strings.ContainsAny(name, "/\\\x00.") || !utf8.ValidString(name):
			t.Errorf("%q escapes to %q, which holds a separator, a dot or a bad byte", id, name)
		case len(name) > maxName+1+32:
			t.Errorf("%q escapes to a %d-byte name", id, len(name))
		}
		// Names must differ even to a case-insensitive file system.
		fold := strings.ToLower(name)
		if other, ok := seen[fold]; ok {
			t.Errorf("%q and %q both escape to %q (case-folded)", id, other, fold)
		}
		seen[fold] = id
	}
}

// Every awkward id works as a proposition id and as a view id, lands in
// its own directory inside the store, and reads back.
func TestAwkwardIDsRoundTrip(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	for _, id := range awkwardIDs {
		if !utf8.ValidString(id) {
			continue // JSON text is UTF-8: this one (a lone surrogate) arrives escaped, below
		}
		v := mustView(t, `{"proposition_id": `+quote(id)+`, "view_id": `+quote(id)+`}`)
		mustPut(t, s, v)
		got, err := s.Get(ctx, id, id)
		if err != nil || got.PropositionID != id || got.ViewID != id {
			t.Fatalf("%q: %v %v", id, got, err)
		}
	}
	// A lone surrogate is refused at the write (snapshot.CheckSurrogates):
	// clients could never ask for it again. Its file name stays safe
	// (TestEscapeIsSafeAndInjective) for stores written before the rule.
	v := mustView(t, `{"proposition_id": "\ud800", "view_id": "\udfff"}`)
	if _, err := s.Put(ctx, []*warrant.View{v}); !isCode(err, warrant.CodeLoneSurrogate) {
		t.Fatalf("lone surrogate id stored: %v", err)
	}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(s.Dir(), e.Name(), indexName)); err != nil {
				t.Errorf("directory %q has no index", e.Name())
			}
		}
	}
	list, err := s.List(ctx, "", MaxListLimit)
	if err != nil || len(list) != len(awkwardIDs)-1 {
		t.Fatalf("list: %d propositions (want %d), %v", len(list), len(awkwardIDs)-1, err)
	}
	mustVerify(t, s)
}

// quote writes a Go string as a JSON string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
