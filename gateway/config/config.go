// Package config reads ewp-gateway's configuration file: JSON, validated
// against schemas/gateway-config.schema.json, with every relative path
// resolved against the file's own directory, so the gateway means the
// same files whatever directory a client starts it from.
//
// Limits: the file is read up to MaxFileBytes; the schema bounds the
// number of servers (256), of arguments, environment variables and
// headers of each (1024, 256, 256) and the length of every string.
package config

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/schemas"
)

// MaxFileBytes is the largest config file read; a larger one is refused.
const MaxFileBytes = 1 << 20

// Defaults for a server that does not say.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultRestartMin = 500 * time.Millisecond
	DefaultRestartMax = 30 * time.Second
)

// AuditOff is the audit value that runs without a decision log.
const AuditOff = "off"

// Config is a validated gateway configuration. Paths are absolute
// (resolved against Dir); optional ones are "" when not given.
type Config struct {
	Path string // the config file, absolute
	Dir  string // its directory

	DB           string // SQLite path (absolute) or postgres:// URL
	Audit        string // the decision log; "" when off (see AuditOff)
	Graph        string
	Policies     string
	CallPolicies string
	Budgets      string
	OperatorKeys string
	ConsoleURL   string

	Servers []Server // sorted by name

	// Manifest is {"tools": [...], "default": ..., "roots": {...},
	// "redact": [...]} as the file spelled them (members absent when the
	// file had none), for manifest.Parse.
	Manifest json.RawMessage

	Pins            string // the pins file
	PinOnFirstSight bool
}

// Server is one downstream MCP server: stdio (Command set) or Streamable
// HTTP (URL set), never both.
type Server struct {
	Name    string
	Command string // resolved against Dir when it names a path ("./x", "bin/x")
	Args    []string
	Env     map[string]string // never logged
	Cwd     string            // stdio: working directory (default Dir)
	URL     string
	Headers map[string]string // never logged

	Resources bool
	Prompts   bool
	Timeout   time.Duration // one call's deadline
	Restart   Backoff
}

// Stdio reports whether the server is started as a child process.
func (s Server) Stdio() bool { return s.Command != "" }

// Backoff bounds the wait before a restart: it starts at Min and doubles
// up to Max.
type Backoff struct {
	Min, Max time.Duration
}

// Error is a config that breaks a rule: each problem names the field by
// its JSON pointer and the rule it breaks.
type Error struct {
	Path     string
	Problems []Problem
}

// Problem is one broken rule.
type Problem struct {
	Pointer string // RFC 6901, "" the whole document
	Rule    string // the schema keyword or check, e.g. "pattern", "required"
	Message string
}

func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(document)"
	}
	return fmt.Sprintf("%s: %s (%s)", ptr, p.Message, p.Rule)
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Path, e.Problems[0])
	for _, p := range e.Problems[1:] {
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads, validates and resolves the config file at path.
func Load(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	raw, err := readCapped(abs)
	if err != nil {
		return nil, err
	}
	return Parse(abs, raw)
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxFileBytes {
		return nil, &Error{Path: path, Problems: []Problem{{Rule: "size",
			Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}}}
	}
	return raw, nil
}

// Parse validates raw as the config file at path (absolute; relative
// paths inside are resolved against its directory).
func Parse(path string, raw []byte) (*Config, error) {
	if len(raw) > MaxFileBytes {
		return nil, &Error{Path: path, Problems: []Problem{{Rule: "size",
			Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}}}
	}
	if ps := validate(raw); len(ps) > 0 {
		return nil, &Error{Path: path, Problems: ps}
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil { // cannot fail after validation, but say so if it does
		return nil, &Error{Path: path, Problems: []Problem{{Rule: "json", Message: err.Error()}}}
	}
	return f.resolve(path)
}

// file is the config as spelled.
type file struct {
	DB              string                `json:"db"`
	Audit           string                `json:"audit"`
	Graph           string                `json:"graph"`
	Policies        string                `json:"policies"`
	CallPolicies    string                `json:"call_policies"`
	Budgets         string                `json:"budgets"`
	OperatorKeys    string                `json:"operator_keys"`
	ConsoleURL      string                `json:"console_url"`
	Servers         map[string]serverFile `json:"servers"`
	Tools           json.RawMessage       `json:"tools"`
	Default         json.RawMessage       `json:"default"`
	Roots           json.RawMessage       `json:"roots"`
	Redact          json.RawMessage       `json:"redact"`
	Pins            string                `json:"pins"`
	PinOnFirstSight bool                  `json:"pin_on_first_sight"`
}

type serverFile struct {
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Resources bool              `json:"resources"`
	Prompts   bool              `json:"prompts"`
	Timeout   string            `json:"timeout"`
	Restart   struct {
		Min string `json:"min"`
		Max string `json:"max"`
	} `json:"restart"`
}

func (f file) resolve(path string) (*Config, error) {
	dir := filepath.Dir(path)
	at := func(p string) string { return resolvePath(dir, p) }
	c := &Config{
		Path: path, Dir: dir,
		DB: f.DB, Graph: at(f.Graph), Policies: at(f.Policies), CallPolicies: at(f.CallPolicies),
		Budgets: at(f.Budgets), OperatorKeys: at(f.OperatorKeys), ConsoleURL: f.ConsoleURL,
		Pins: at(f.Pins), PinOnFirstSight: f.PinOnFirstSight,
	}
	if !auditstore.IsPostgres(f.DB) {
		c.DB = at(f.DB)
	}
	c.Audit = auditPath(c.DB, f.Audit, at)
	if c.Pins == "" {
		c.Pins = strings.TrimSuffix(path, filepath.Ext(path)) + ".pins.json"
	}
	c.Manifest = manifest(map[string]json.RawMessage{"tools": f.Tools, "default": f.Default, "roots": f.Roots, "redact": f.Redact})
	var ps []Problem
	for name, s := range f.Servers {
		srv, p := s.resolve(name, dir)
		ps = append(ps, p...)
		c.Servers = append(c.Servers, srv)
	}
	if len(ps) > 0 {
		slices.SortFunc(ps, func(a, b Problem) int { return strings.Compare(a.Pointer, b.Pointer) })
		return nil, &Error{Path: path, Problems: ps}
	}
	slices.SortFunc(c.Servers, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

// auditPath is the decision log: "" when off, beside the ledger when not
// given (as ewp-mcp and ewp-audit find it).
func auditPath(db, audit string, at func(string) string) string {
	switch {
	case audit == AuditOff:
		return ""
	case audit == "":
		p, _ := auditstore.Where(db, "") // db is required, so Where cannot fail
		return p
	case auditstore.IsPostgres(audit):
		return audit
	}
	return at(audit)
}

// manifest is the members the file has, as one object.
func manifest(members map[string]json.RawMessage) json.RawMessage {
	for k, v := range members {
		if v == nil {
			delete(members, k)
		}
	}
	out, _ := json.Marshal(members)
	return out
}

func (s serverFile) resolve(name, dir string) (Server, []Problem) {
	srv := Server{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers,
		Resources: s.Resources, Prompts: s.Prompts, Cwd: resolvePath(dir, s.Cwd)}
	if srv.Command != "" {
		srv.Command = resolveCommand(dir, srv.Command)
		if srv.Cwd == "" {
			srv.Cwd = dir
		}
	}
	var ps []Problem
	base := "/servers" + schemas.Pointer([]string{name})
	d := func(field, v string, def time.Duration) time.Duration {
		if v == "" {
			return def
		}
		t, err := time.ParseDuration(v)
		if err != nil || t <= 0 {
			ps = append(ps, Problem{Pointer: base + field, Rule: "duration", Message: "must be a positive duration such as \"30s\""})
		}
		return t
	}
	srv.Timeout = d("/timeout", s.Timeout, DefaultTimeout)
	srv.Restart.Min = d("/restart/min", s.Restart.Min, DefaultRestartMin)
	srv.Restart.Max = d("/restart/max", s.Restart.Max, max(DefaultRestartMax, srv.Restart.Min))
	if srv.Restart.Max < srv.Restart.Min {
		ps = append(ps, Problem{Pointer: base + "/restart/max", Rule: "min<=max", Message: "must not be shorter than restart.min"})
	}
	return srv, ps
}

// resolvePath makes p absolute against dir; "" stays "".
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// resolveCommand resolves a command that names a path (it holds a
// separator) against dir; a bare name ("npx") is looked up in PATH when
// started, as a shell would.
func resolveCommand(dir, cmd string) string {
	if !strings.ContainsRune(cmd, filepath.Separator) && !strings.ContainsRune(cmd, '/') {
		return cmd
	}
	return resolvePath(dir, cmd)
}
