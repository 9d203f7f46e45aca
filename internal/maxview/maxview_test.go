package maxview

import (
	"errors"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// The built view is admitted by the default limits and at each of them,
// inline and in its stored form; each Over view is refused with the limit
// code.
func TestBuildIsMaximal(t *testing.T) {
	d := warrant.DefaultLimits
	for _, c := range []struct {
		name string
		size func([]byte) int
	}{{"inline", nil}, {"stored", StoredSize}} {
		data, sh := Build(warrant.Limits{}, "v-max", c.size)
		if _, err := warrant.DecodeView(data); err != nil {
			t.Fatalf("%s: maximal view refused: %v", c.name, err)
		}
		n := len(data)
		if c.size != nil {
			n = c.size(data)
		}
		if sh.Bytes != len(data) || n > d.MaxViewBytes || n < d.MaxViewBytes-64 {
			t.Errorf("%s: %d bytes, want just under %d", c.name, n, d.MaxViewBytes)
		}
		if sh.Records != d.MaxRecords || sh.ViewSubjects != d.MaxSubjects || sh.CheckSubjects != d.MaxSubjects || sh.MetaStrings < 4 {
			t.Errorf("%s: shape %+v is not at the limits %+v", c.name, sh, d)
		}
		t.Logf("%s: %+v, %d bytes counted", c.name, sh, n)
	}
	for _, which := range []string{"bytes", "records", "subjects", "string"} {
		var we *warrant.Error
		if _, err := warrant.DecodeView(Over(warrant.Limits{}, which)); !errors.As(err, &we) || we.Code != warrant.CodeLimitExceeded {
			t.Errorf("over %s: %v, want %s", which, err, warrant.CodeLimitExceeded)
		}
	}
}
