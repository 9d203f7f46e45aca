package maxview

import (
	"errors"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// The built view is admitted by the default limits and near each of them;
// each Over view is refused with the limit code.
func TestBuildIsMaximal(t *testing.T) {
	data, sh := Build(warrant.Limits{}, "v-max")
	d := warrant.DefaultLimits
	if _, err := warrant.DecodeView(data); err != nil {
		t.Fatalf("maximal view refused: %v", err)
	}
	if sh.Bytes != len(data) || sh.Bytes > d.MaxViewBytes || sh.Bytes < d.MaxViewBytes-64 {
		t.Errorf("%d bytes, want just under %d", sh.Bytes, d.MaxViewBytes)
	}
	if sh.Records < d.MaxRecords*9/10 || sh.ViewSubjects != d.MaxSubjects || sh.CheckSubjects != d.MaxSubjects {
		t.Errorf("shape %+v is not near the limits %+v", sh, d)
	}
	t.Logf("%+v", sh)
	for _, which := range []string{"bytes", "records", "subjects", "string"} {
		var we *warrant.Error
		if _, err := warrant.DecodeView(Over(warrant.Limits{}, which)); !errors.As(err, &we) || we.Code != warrant.CodeLimitExceeded {
			t.Errorf("over %s: %v, want %s", which, err, warrant.CodeLimitExceeded)
		}
	}
}
