package pgurl

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"/var/lib/ewp.db", "/var/lib/ewp.db"},
		{"ewp.db.audit", "ewp.db.audit"},
		{"postgres://owner@db/ewp", "postgres://owner@db/ewp"},
		{"postgres://u:hunter2@db:5432/ewp?sslmode=require", "postgres://u:xxxxx@db:5432/ewp?sslmode=require"},
		{"postgresql://u@db/ewp?password=hunter2&sslmode=disable", "postgresql://u@db/ewp?password=xxxxx&sslmode=disable"},
		{"postgres://db/ewp?sslpassword=hunter2", "postgres://db/ewp?sslpassword=xxxxx"},
		{"postgres://db/ewp?oauth_client_secret=hunter2&pool_max_conns=4", "postgres://db/ewp?oauth_client_secret=xxxxx&pool_max_conns=4"},
		{"postgres://db/ewp?PASSWORD=hunter2", "postgres://db/ewp?PASSWORD=xxxxx"},
		{"postgres://db/ewp?pass%77ord=hunter2", "postgres://db/ewp?pass%77ord=xxxxx"},        // the key encoded
		{"postgres://db/ewp?pa%zzss=hunter2", "postgres://db/ewp?pa%zzss=xxxxx"},              // a key that does not decode: in doubt
		{"postgres://u:hun%zzter2@db/ewp", "postgres://u:xxxxx@db/ewp"},                       // unparsable
		{"postgres://u:hun ter2@db/ewp", "postgres://u:xxxxx@db/ewp"},                         // unparsable
		{"postgres://u:hun@ter2@db/ewp", "postgres://u:xxxxx@db/ewp"},                         // '@' in the password
		{"postgres://u:12/34@db/ewp", "postgres://u:xxxxx@db/ewp"},                            // parses, host u port 12: doubtful
		{"postgres://u:a#b@db/ewp", "postgres://u:xxxxx@db/ewp"},                              // '#' in the password
		{"postgres://u:p%zz@db/ewp?password=x y", "postgres://u:xxxxx@db/ewp?password=xxxxx"}, // both, unparsable
		{"host=db user=u password=hunter2 dbname=ewp", "host=db user=u password=xxxxx dbname=ewp"},
		{"host=db password = 'hun ter\\' 2' dbname=ewp", "host=db password = xxxxx dbname=ewp"},
		{"host=db sslpassword='unterminated dbname=ewp", "host=db sslpassword=xxxxx"},
		{"host=db password=hun\\ ter2 dbname=ewp", "host=db password=xxxxx dbname=ewp"},
	}
	for _, c := range cases {
		got := Redact(c.in)
		if got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"hunter2", "hun", "ter2", "12/34"} {
			if strings.Contains(c.in, secret) && strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q keeps %q", c.in, got, secret)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	dsn := "postgres://u:s%40cret@db/ewp?sslpassword=phrase"
	inner := fmt.Errorf("cannot parse `postgres://u:s@cret@db/ewp?sslpassword=phrase`: %w", fs.ErrInvalid)
	err := Scrub(dsn, inner)
	if msg := err.Error(); strings.Contains(msg, "s@cret") || strings.Contains(msg, "phrase") || !strings.Contains(msg, "cannot parse") {
		t.Fatalf("scrubbed: %s", msg)
	}
	if !errors.Is(err, fs.ErrInvalid) {
		t.Error("the scrubbed error no longer matches what it wrapped")
	}
	if clean := errors.New("no such host"); Scrub(dsn, clean) != clean {
		t.Error("an error without secrets was replaced")
	}
	if Scrub(dsn, nil) != nil {
		t.Error("nil is not nil")
	}
}

func TestIsPostgres(t *testing.T) {
	for s, want := range map[string]bool{"postgres://db/x": true, "postgresql://db/x": true, "ewp.db": false, "host=db": false, "POSTGRES://db": false} {
		if IsPostgres(s) != want {
			t.Errorf("IsPostgres(%q) = %v", s, !want)
		}
	}
}
