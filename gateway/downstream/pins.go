package downstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxPinsBytes bounds the pins file read at start.
const MaxPinsBytes = 16 << 20

// PinState is what the pins say of a tool's definition as listed now.
type PinState string

const (
	Pinned   PinState = "pinned"   // the sha256 matches the one pinned: listed and callable
	Unpinned PinState = "unpinned" // never pinned: withheld, calls refused (EWP_REFUSE_TOOL_UNPINNED)
	Changed  PinState = "changed"  // differs from the one pinned: withheld, calls refused (EWP_REFUSE_TOOL_CHANGED)
)

// pinsFile is the pins on disk: {"version": 1, "tools": {"SERVER__TOOL": {"sha256": ..., "pinned_at": ...}}}.
type pinsFile struct {
	Version int            `json:"version"`
	Tools   map[string]pin `json:"tools"`
}

type pin struct {
	SHA256   string    `json:"sha256"`
	PinnedAt time.Time `json:"pinned_at"`
}

// pins is the pins file in memory; writes go to disk before memory.
type pins struct {
	path string
	mu   sync.Mutex
	m    map[string]pin
}

func loadPins(path string) (*pins, error) {
	m, err := readPins(path)
	if err != nil {
		return nil, err
	}
	return &pins{path: path, m: m}, nil
}

// reload reads the file again (another process may have pinned).
func (p *pins) reload() error {
	m, err := readPins(p.path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.m = m
	p.mu.Unlock()
	return nil
}

// readPins reads the pins file; a missing file is no pins.
func readPins(path string) (map[string]pin, error) {
	m := map[string]pin{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pins %s: %w", path, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxPinsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("pins %s: %w", path, err)
	}
	if len(raw) > MaxPinsBytes {
		return nil, fmt.Errorf("pins %s: larger than %d bytes", path, MaxPinsBytes)
	}
	var pf pinsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("pins %s: %w", path, err)
	}
	if pf.Version != 1 {
		return nil, fmt.Errorf("pins %s: /version must be 1, got %d", path, pf.Version)
	}
	for name, e := range pf.Tools {
		if !isSHA256Hex(e.SHA256) {
			return nil, fmt.Errorf("pins %s: /tools/%s/sha256 must be 64 lower-case hex digits", path, name)
		}
		m[name] = e
	}
	return m, nil
}

func (p *pins) get(name string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[name]
	return e.SHA256, ok
}

// set pins each name to its sha256 and writes the file (atomically: a
// temporary file renamed over it). It merges into the file as it is now,
// so pins another process wrote meanwhile are kept.
func (p *pins) set(sums map[string]string, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, err := readPins(p.path)
	if err != nil {
		return err
	}
	for k, s := range sums {
		if old, ok := next[k]; ok && old.SHA256 == s {
			continue
		}
		next[k] = pin{SHA256: s, PinnedAt: now.UTC()}
	}
	raw, err := json.MarshalIndent(pinsFile{Version: 1, Tools: next}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(p.path, append(raw, '\n')); err != nil {
		return fmt.Errorf("pins %s: %w", p.path, err)
	}
	p.m = next
	return nil
}

func writeAtomic(path string, raw []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pins-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// definition is what the agent is shown of a downstream tool and what its
// pin covers: name, title, description, input and output schemas and
// annotations, as this gateway decoded them (a keyword mcp-go drops is
// neither shown nor hashed). Everything else (_meta, icons) is dropped.
func definition(t mcp.Tool) mcp.Tool {
	return mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, RawInputSchema: t.RawInputSchema,
		OutputSchema: t.OutputSchema, RawOutputSchema: t.RawOutputSchema, Annotations: t.Annotations}
}

// DefinitionSHA256 is the hex sha256 of the canonical JSON of a tool's
// definition (see definition): members sorted, no insignificant space,
// numbers as written, no HTML escaping.
func DefinitionSHA256(t mcp.Tool) (string, error) {
	raw, err := json.Marshal(definition(t))
	if err != nil {
		return "", err
	}
	c, err := canonical(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

func canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
