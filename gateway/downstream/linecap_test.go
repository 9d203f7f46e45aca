package downstream

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestLineGuardPassesJSONLinesAndDropsBlank(t *testing.T) {
	in := "{\"a\":1}\n\n  \r\n[2]\n"
	var dropped []string
	g := newLineGuard(strings.NewReader(in), 64, func(b []byte) { dropped = append(dropped, string(b)) })
	out, err := io.ReadAll(g)
	if err != nil || string(out) != "{\"a\":1}\n[2]\n" || dropped != nil {
		t.Fatalf("out %q err %v dropped %q", out, err, dropped)
	}
}

func TestLineGuardRefusesALongLine(t *testing.T) {
	ok := `{"x":"` + strings.Repeat("a", 100-8) + `"}` // exactly 100 bytes
	g := newLineGuard(strings.NewReader(ok+"\n"+ok+"a\n"), 100, nil)
	out, err := io.ReadAll(g)
	if !isProtocol(err) || string(out) != ok+"\n" {
		t.Fatalf("out %d bytes, err %v; want the first line and a protocol error", len(out), err)
	}
	// A long line without a newline at all is refused too, once past the cap.
	g = newLineGuard(io.MultiReader(strings.NewReader(strings.Repeat("b", 1<<20)), neverEnds{}), 1000, nil)
	if _, err := io.ReadAll(g); !isProtocol(err) {
		t.Fatalf("err %v, want a protocol error", err)
	}
}

// neverEnds reads as an endless stream of 'c'.
type neverEnds struct{}

func (neverEnds) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'c'
	}
	return len(p), nil
}

func TestLineGuardForgivesAFewGarbageLines(t *testing.T) {
	var in bytes.Buffer
	for range maxGarbageLines {
		in.WriteString("npm notice: something\n")
	}
	in.WriteString("{}\n")
	n := 0
	out, err := io.ReadAll(newLineGuard(&in, 100, func([]byte) { n++ }))
	if err != nil || string(out) != "{}\n" || n != maxGarbageLines {
		t.Fatalf("out %q err %v dropped %d", out, err, n)
	}
	in.Reset()
	for range maxGarbageLines + 1 {
		in.WriteString("garbage\n")
	}
	in.WriteString("{}\n")
	if _, err := io.ReadAll(newLineGuard(&in, 100, nil)); !isProtocol(err) {
		t.Fatalf("err %v, want a protocol error after %d garbage lines", err, maxGarbageLines+1)
	}
}

func TestLineCap(t *testing.T) {
	body := "data: " + strings.Repeat("z", 94) + "\n" + "data: {}\n" // a 100-byte line, then a short one
	var limited error
	c := &lineCap{rc: io.NopCloser(strings.NewReader(body)), max: 100, onLimit: func(err error) { limited = err }}
	if out, err := io.ReadAll(c); err != nil || string(out) != body || limited != nil {
		t.Fatalf("out %q err %v", out, err)
	}
	c = &lineCap{rc: io.NopCloser(strings.NewReader(strings.Repeat("z", 101))), max: 100, onLimit: func(err error) { limited = err }}
	if _, err := io.ReadAll(c); !isProtocol(err) || !isProtocol(limited) {
		t.Fatalf("err %v limited %v, want protocol errors", err, limited)
	}
}

func TestLineBudget(t *testing.T) {
	b := lineBudget{max: 2, window: time.Second}
	var reported []int
	report := func(n int) { reported = append(reported, n) }
	t0 := time.Unix(100, 0)
	got := []bool{b.take(t0, report), b.take(t0, report), b.take(t0, report), b.take(t0.Add(999*time.Millisecond), report)}
	if fmt.Sprint(got) != "[true true false false]" || reported != nil {
		t.Fatalf("first window: %v, reported %v", got, reported)
	}
	if !b.take(t0.Add(time.Second), report) || fmt.Sprint(reported) != "[2]" {
		t.Fatalf("the next window: reported %v", reported)
	}
}
