package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/store"
)

const configUsage = `usage: ewp-mcp config claude-code|claude-desktop|openclaw [--name NAME] SERVER-FLAGS...

Prints what the client needs to start this server (the exact command line
or JSON block it takes), with the absolute paths of this binary, the ledger
and every other file filled in, so nothing depends on the directory the
client starts it from. SERVER-FLAGS are the flags ewp-mcp would run with,
checked now as the server checks them. With --http the client connects to
the URL instead (Claude Desktop's configuration file takes stdio servers
only). --name is the name the client lists the server under (default ewp).

  ewp-mcp config claude-code --db ewp.sqlite          # a command to run
  ewp-mcp config claude-desktop --db ewp.sqlite       # JSON for claude_desktop_config.json
  ewp-mcp config openclaw --db ewp.sqlite --http 127.0.0.1:8765
`

// pathFlags are the server flags that name a file: config makes them
// absolute, since a client starts the server from a directory of its own.
var pathFlags = map[string]bool{
	"db": true, "policies": true, "audit": true, "operator-keys": true,
	"console-key": true, "ingest-token-file": true, "operator-token-file": true,
	"notify-secret-file": true, "demo-dir": true,
}

// runConfig is `ewp-mcp config CLIENT FLAGS...`.
func runConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, configUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	client, rest := args[0], args[1:]
	name := "ewp"
	if len(rest) >= 2 && (rest[0] == "--name" || rest[0] == "-name") {
		name, rest = rest[1], rest[2:]
	}
	out, err := clientConfig(client, name, rest, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "ewp-mcp config:", err)
		return 2
	}
	fmt.Fprint(stdout, out)
	if cfg, _ := parseConfig(rest, getenv); cfg.db != "" && !store.IsPostgres(cfg.db) {
		if _, err := os.Stat(cfg.db); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "ewp-mcp config: note: the ledger %s does not exist yet; create it with ewp-ingest before the client starts the server\n", absolute(cfg.db))
		}
	}
	return 0
}

// clientConfig is the text for client, or an error naming what is wrong.
func clientConfig(client, name string, flags []string, getenv func(string) string) (string, error) {
	for _, f := range flags {
		if pgurl.Redact(f) != f {
			return "", errors.New("a flag holds a password (a postgres:// URL with one): a client's configuration would keep it in the clear; put it in ~/.pgpass or PGPASSFILE and leave it out of the URL")
		}
	}
	cfg, err := parseConfig(flags, getenv)
	if errors.Is(err, errHelp) {
		return "", errors.New("--help is not a server flag here; see ewp-mcp config --help")
	}
	if err != nil {
		return "", err
	}
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this binary's path: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	serverArgs := absoluteFlags(flags)
	url := ""
	if cfg.httpAddr != "" {
		url = "http://" + listenHost(cfg.httpAddr) + "/mcp"
	}
	switch client {
	case "claude-code":
		if url != "" {
			return shellLine("claude", "mcp", "add", "--transport", "http", name, url), nil
		}
		return shellLine(append([]string{"claude", "mcp", "add", name, "--", bin}, serverArgs...)...), nil
	case "claude-desktop":
		if url != "" {
			return "", errors.New("claude-desktop: Claude Desktop's configuration file starts stdio servers only; leave out --http")
		}
		return desktopJSON(name, bin, serverArgs)
	case "openclaw":
		if url != "" {
			return shellLine("openclaw", "mcp", "add", name, "--url", url, "--transport", "streamable-http"), nil
		}
		line := []string{"openclaw", "mcp", "add", name, "--command", bin}
		for _, a := range serverArgs {
			line = append(line, "--arg", a)
		}
		return shellLine(line...), nil
	}
	return "", fmt.Errorf("unknown client %q: want claude-code, claude-desktop or openclaw", client)
}

// absoluteFlags returns flags with the value of every path flag made
// absolute (a postgres:// URL and "off" stay as they are), in the form
// "--flag value".
func absoluteFlags(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		a := flags[i]
		key, val, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !pathFlags[key] {
			out = append(out, a)
			continue
		}
		if !inline {
			if i+1 >= len(flags) {
				out = append(out, a)
				continue
			}
			i++
			val = flags[i]
		}
		out = append(out, "--"+key, absolute(val))
	}
	return out
}

// absolute is path made absolute, unless it is a database URL or "off".
func absolute(path string) string {
	if path == "off" || pgurl.IsPostgres(path) {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// listenHost is the host:port a client reaches an --http address at
// ("8765" and ":8765" bind 127.0.0.1).
func listenHost(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// desktopJSON is the mcpServers block of claude_desktop_config.json.
func desktopJSON(name, bin string, args []string) (string, error) {
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	b, err := json.MarshalIndent(map[string]map[string]server{"mcpServers": {name: {bin, args}}}, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

// shellLine quotes each word for a POSIX shell (shellQuote), as a line
// to paste.
func shellLine(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ") + "\n"
}
