package consolelink

import "testing"

func TestDecision(t *testing.T) {
	for _, c := range []struct{ base, id, want string }{
		{"http://127.0.0.1:8765/console/", "0192f000-0000-7000-8000-000000000001", "http://127.0.0.1:8765/console/decision?id=0192f000-0000-7000-8000-000000000001"},
		{"http://127.0.0.1:8765/console", "a/b&c", "http://127.0.0.1:8765/console/decision?id=a%2Fb%26c"},
		{"/console/", "d1", "/console/decision?id=d1"},
		{"", "d1", ""},
		{"http://x/console/", "", ""},
	} {
		if got := Decision(c.base, c.id); got != c.want {
			t.Errorf("Decision(%q, %q) = %q, want %q", c.base, c.id, got, c.want)
		}
	}
}
