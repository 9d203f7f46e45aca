package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 stretches"}, {1, "1 stretch"}, {2, "2 stretches"}, {-1, "-1 stretches"}} {
		if got := Count(c.n, "stretch", "stretches"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Count(1, "use", "uses"); got != "1 use" {
		t.Errorf("int: %q", got)
	}
}
