package linecap

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A line of exactly the bound passes; one byte more is skipped whole,
// however long, and the next line is read; a last line may lack its
// newline.
func TestBound(t *testing.T) {
	in := strings.Repeat("a", 8) + "\n" + strings.Repeat("b", 9) + "\n" + strings.Repeat("c", 200<<10) + "\nlast"
	r := NewReader(strings.NewReader(in), 8)
	want := []struct {
		line string
		err  error
	}{{"aaaaaaaa", nil}, {"", ErrTooLong}, {"", ErrTooLong}, {"last", io.EOF}}
	for i, w := range want {
		line, err := r.Next()
		if string(line) != w.line || !errors.Is(err, w.err) && err != w.err {
			t.Fatalf("read %d: %q %v, want %q %v", i, line, err, w.line, w.err)
		}
	}
}
