package grounding

import (
	"bytes"
	"fmt"
	"strconv"
)

// DepthLevel is how deeply a concept is understood (spec §1.1). The enum is
// closed: levels outside 0..4 are rejected when decoded and when applied.
type DepthLevel int

// The five depth levels.
const (
	Existence    DepthLevel = 0
	Identity     DepthLevel = 1
	Capabilities DepthLevel = 2
	Constraints  DepthLevel = 3
	Implications DepthLevel = 4
)

// MaxLevel is the highest level; "D4+" in VRE's README is only a label.
const MaxLevel = Implications

var levelNames = [...]string{"EXISTENCE", "IDENTITY", "CAPABILITIES", "CONSTRAINTS", "IMPLICATIONS"}

// Valid reports whether l is one of the five levels.
func (l DepthLevel) Valid() bool { return l >= Existence && l <= MaxLevel }

// String is the label used in messages, e.g. "D3 CONSTRAINTS".
func (l DepthLevel) String() string {
	if !l.Valid() {
		return fmt.Sprintf("D%d INVALID", int(l))
	}
	return fmt.Sprintf("D%d %s", int(l), levelNames[l])
}

// UnmarshalJSON accepts only an integer literal in 0..4, so an out-of-range
// level never reaches the engine.
func (l *DepthLevel) UnmarshalJSON(data []byte) error {
	v, err := parseLevel(data)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

func parseLevel(data []byte) (DepthLevel, error) {
	n, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil {
		return 0, fmt.Errorf("depth level must be an integer from 0 to 4, got %s", data)
	}
	if l := DepthLevel(n); l.Valid() {
		return l, nil
	}
	return 0, fmt.Errorf("depth level %d is outside 0..4", n)
}

// levelLabel renders an optional level; cmax "none" is shown as "none".
func levelLabel(l *DepthLevel) string {
	if l == nil {
		return "none"
	}
	return l.String()
}

// levelPtr turns the engine's internal "-1 means none" into *DepthLevel.
func levelPtr(n int) *DepthLevel {
	if n < 0 {
		return nil
	}
	l := DepthLevel(n)
	return &l
}
