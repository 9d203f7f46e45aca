package sqlite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit/sqlite"
)

// TestOlderSchemaRefused: a log whose schema_version is not this build's
// is refused by every way of opening it, with ErrSchemaVersion and a
// message naming both versions, and left as it was: no build converts a
// log (no release ever wrote versions 1 and 2).
func TestOlderSchemaRefused(t *testing.T) {
	for _, old := range []string{"1", "2"} {
		l, _ := newLog(t)
		l.Close()
		raw := rawDB(t, l.Path())
		mustExec(t, raw, `DROP TRIGGER audit_meta_no_UPDATE`)
		mustExec(t, raw, `UPDATE audit_meta SET value = ? WHERE key = 'schema_version'`, old)
		raw.Close()
		opens := map[string]func() (*sqlite.Log, error){
			"Open":          func() (*sqlite.Log, error) { return sqlite.Open(l.Path(), sqlite.Options{}) },
			"Open ReadOnly": func() (*sqlite.Log, error) { return sqlite.Open(l.Path(), sqlite.Options{ReadOnly: true}) },
			"OpenOrCreate":  func() (*sqlite.Log, error) { return sqlite.OpenOrCreate(l.Path(), sqlite.Options{}) },
		}
		for name, open := range opens {
			got, err := open()
			if err == nil {
				got.Close()
				t.Fatalf("version %s, %s: opened", old, name)
			}
			msg := err.Error()
			if !errors.Is(err, sqlite.ErrSchemaVersion) || !strings.Contains(msg, "schema_version "+old) ||
				!strings.Contains(msg, "only version 3") || strings.Contains(msg, "ewp-audit upgrade") {
				t.Errorf("version %s, %s: %v", old, name, err)
			}
		}
		raw = rawDB(t, l.Path())
		var v string
		if err := raw.QueryRow(`SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != old {
			t.Errorf("version %s: the refused log now says %q (%v)", old, v, err)
		}
		raw.Close()
	}
}
